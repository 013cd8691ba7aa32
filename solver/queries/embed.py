"""A witness found under small parameters (a board of a few squares, where the symbolic search
is fast) presented under other ones (the game's own board).

The state is carried over through its JSON: boards (maps keyed by a record of two integers,
written as rows) are padded with the default value on the new rows and columns; every other
field is kept as written.  The move is read again under the new parameters.  The result is
then replayed under both readings in the interpreter with the new parameters, and it is
reported only if they still disagree there: a witness is never carried over on trust.  Whether
it is still the *smallest* there is a property of the rules (locality of the rule in dispute),
argued in the spec where the reading is declared; the stored record names the parameters it
was searched under."""
from __future__ import annotations

from ..lang.codec import from_json, grid_axes, to_json
from ..lang.errors import RulebookError
from ..engine.game import Move, load_game
from .readings import Ambiguity, explained, outcome, variants_of
from ..lang.types import default


def carry_state(g_from, g_to, st):
    """The state ``st`` of ``g_from`` as a state of ``g_to`` (boards padded with defaults)."""
    out = list(g_to.initial())
    for i, (f_from, v) in enumerate(zip(g_from.p.state, st)):
        f_to = g_to.p.state[i]
        j = to_json(f_from.type, v)
        axes_from, axes_to = grid_axes(f_from.type), grid_axes(f_to.type)
        if axes_from is not None and axes_to is not None:
            pad = to_json(f_to.type.val, default(f_to.type.val))
            xs, ys = axes_to
            j = [[(j[y][x] if y < len(j) and x < len(j[y]) else pad) for x in xs] for y in ys]
        out[i] = from_json(f_to.type, j, f"witness state.{f_to.name}")
    return tuple(out)


def present(game_name: str, amb: Ambiguity, small: dict, big: dict,
            keep: bool = False) -> Ambiguity:
    """``amb`` (found with parameters ``small``) replayed under parameters ``big``, to be
    drawn there.  Where both readings give the same outcome under ``big`` (the disagreement
    needs the small board's edges), a `RulebookError` says so; with ``keep``, the witness is
    kept under ``small`` instead, with a note saying why (`docs/refresh.py`: one witness that
    does not carry over must not lose the others)."""
    if not amb.found:
        return amb
    if amb.params:
        # Found in an example written for other parameters (3 x 2 squares where the search
        # runs on 3 x 3): carried over from those, with the same parameters presented.
        shown = {k: v for k, v in big.items() if small.get(k) != v}
        small = dict(amb.params)
        big = {**small, **shown}
    # An expansion (torres-advanced) loads as its base game with the expansion as a variant.
    base = load_game(game_name, (), tuple(sorted(small.items())))
    name, variants = base.source, variants_of(base)
    ga_s = load_game(name, variants + (f"{amb.reading}:{amb.a}",), tuple(sorted(small.items())))
    ga = load_game(name, variants + (f"{amb.reading}:{amb.a}",), tuple(sorted(big.items())))
    gb = load_game(name, variants + (f"{amb.reading}:{amb.b}",), tuple(sorted(big.items())))
    st_small = tuple(from_json(f.type, amb.state_json[f.name], f"witness state.{f.name}")
                     for f in ga_s.p.state)
    st = carry_state(ga_s, ga, st_small)
    out = Ambiguity(amb.reading, amb.question, amb.a, amb.b, True)
    if amb.move is not None:
        name, *args = amb.move
        act = ga.action(name)
        m = Move(name, tuple(from_json(b.domain.elem, x, f"witness move {name}")
                             for b, x in zip(act.ir.params, args)))
        ra, rb = outcome(ga, st, m), outcome(gb, st, m)
        if ra[0] == rb[0] == "illegal" and ra != rb:
            # Both readings refuse the move there, by other rules: the rule in dispute needs
            # more than the small board holds (a rule that counts what only the big board
            # has room for).  The witness stays where it was found, and says so.
            return _kept(amb, small, f"under {big} both readings refuse the move "
                                     f"({amb.a}: rule {ra[1]}; {amb.b}: rule {rb[1]})")
        if ra == rb:
            # The disagreement needs the small board's edges (a reading that leaves no room
            # on the small board for a later placement, where the big board leaves room under
            # both).
            if not keep:
                raise RulebookError(f"{amb.reading}: {amb.a} vs {amb.b}: the witness no longer "
                                    f"disagrees under {big}")
            return _kept(amb, small, f"under {big} both readings give the same outcome "
                                     f"({_said(ra)})")
        out = explained(ga, gb, out, st, m, ra, rb, dict(big))
        out.marked = True
    else:
        out = explained(ga, gb, out, st, None, None, None, dict(big))
    out.minimal = amb.minimal
    out.searched_on = dict(small)
    return out


def _kept(amb: Ambiguity, small: dict, why: str) -> Ambiguity:
    """``amb`` shown on the parameters it was found under, with a note saying why."""
    amb.params = dict(small)
    amb.searched_on = dict(small)
    amb.note = f"shown under {small}, where it was found: {why}"
    return amb


def _said(res: tuple) -> str:
    """An outcome (`readings.outcome`) in a few words: legal, or the rule that refuses."""
    return "legal" if res[0] == "legal" else f"refused by rule {res[1]}"
