"""An ambiguity witness drawn: the text `rulebook ambiguities` prints and the SVG it writes.

`queries.readings` finds and replays a witness and hands back its state; drawing it is this
layer's, so the queries stay free of the renderers."""
from __future__ import annotations

from ..engine.game import load_game
from ..queries.readings import Ambiguity
from .board import move_marks, move_path, path_text
from .render import render_svg, render_text


def _highlight(amb: Ambiguity) -> set[str] | None:
    return set(amb.fields) or None


def witness_text(amb: Ambiguity) -> str:
    """The witness as text: the two readings, the move, the outcomes and the state."""
    head = f"{amb.reading}: {amb.a} vs {amb.b} — {amb.question}"
    where = scope_text(amb)
    if amb.found is None:
        return head + "\n  unknown (z3 gave up)" + where
    if not amb.found:
        return head + "\n  the readings agree on every state and move (no witness exists)" \
            + where
    lines = [head + where,
             f"  {_kind(amb)} witness ({amb.size} elements), "
             f"move {amb.move}: they disagree about the {amb.what}",
             *([f"  path: {path_text(p)}"] if (p := _path(amb)) else []),
             f"  under {amb.a}: {amb.under_a}",
             f"  under {amb.b}: {amb.under_b}",
             "  state:"]
    state = render_text(amb.game, amb.state, highlight=_highlight(amb))
    lines += ["    " + ln for ln in state.splitlines()]
    return "\n".join(lines)


def _kind(amb: Ambiguity) -> str:
    """"smallest", or "smallest where found" for a witness carried to other parameters (a
    smaller one may exist there), or "small" when not proved smallest."""
    if not amb.minimal:
        return "small"
    return "smallest (where found)" if amb.searched_on else "smallest"


def scope_text(amb: Ambiguity) -> str:
    """The parameters a witness (or its absence) holds under, where it was found and where
    none was, as indented lines (empty when the game's own parameters are all there is)."""
    def fmt(params: dict) -> str:
        return " ".join(f"{k}={v}" for k, v in params.items())
    lines = []
    if amb.params:
        lines.append(f"on {fmt(amb.params)}")
    if amb.searched_on and amb.searched_on != amb.params:
        lines.append(f"found on {fmt(amb.searched_on)}, replayed on the parameters above")
    if amb.note:
        lines.append(amb.note)
    if amb.tried:
        lines.append("no witness on " + "; ".join(fmt(t) for t in amb.tried))
    return "".join(f"\n  {ln}" for ln in lines)


def witness_svg(amb: Ambiguity) -> str:
    """The witness state as SVG, with the outcomes as a note and, when ``amb.marked``, the
    move's squares framed; "" when there is no witness."""
    if amb.state is None:
        return ""
    note = f"{amb.reading}: {amb.a} vs {amb.b}; move {amb.move}\n" \
           f"{amb.a}: {amb.under_a}\n{amb.b}: {amb.under_b}"
    marks = move_marks(amb.game, amb.move) if amb.marked else ()
    path = _path(amb) if amb.marked else []
    if path:
        note += f"\npath: {path_text(path)}"
    return render_svg(amb.game, amb.state, highlight=_highlight(amb),
                      title=f"{amb.game.name}: where {amb.reading} readings disagree", note=note,
                      marks=marks, path=path)


def _path(amb: Ambiguity) -> list:
    """The squares the witness's move passes on its way, when its action says (`show ...
    via`) and it takes more than one step: under reading ``a``, or under ``b`` when only
    ``b`` allows the move."""
    if amb.game is None or amb.state is None or amb.move is None:
        return []
    p = move_path(amb.game, amb.move, amb.state)
    if not p and amb.under_b.startswith("legal"):
        g = amb.game
        gb = load_game(g.source, g.extensions + (f"{amb.reading}:{amb.b}",),
                       tuple(sorted(g.p.param_values.items())))
        p = move_path(gb, amb.move, amb.state)
    return p if len(p) > 2 else []
