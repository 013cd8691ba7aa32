"""A game's documentation page, as reStructuredText, generated from its checked spec: set-up,
turn structure, rules with English, examples run, readings with witnesses, invariants.  Pure
functions (no Sphinx here, so tests can call them); ``sphinxext`` parses their text.  Every page
is generic: it walks the checked program, never names a game's pieces.  (The reference pages are
in ``docrefs``.)

Slow answers (ambiguity witnesses, proofs) are not recomputed here: they are read from JSON files
that ``docs/refresh.py`` writes.  Each stored witness is replayed in the interpreter under both
readings; one that no longer shows a disagreement is reported through ``warn`` (an error in a
``-W`` build), so a stale witness cannot be shown as if it were current.
"""
from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from . import english as E
from . import rst
from ..lang.digest import current
from ..lang import ir
from ..lang.codec import from_json
from ..lang.errors import RulebookError
from ..engine.game import Game, Move, load_game
from ..lang.irwalk import nodes

# Where `rulebook serve` listens by default: each stored witness links to its compare view.
EXPLORER = "http://127.0.0.1:8000"


@dataclass
class Page:
    """A generated page: its reST text, the files it was made from, and its link targets."""

    text: str
    depends: set = field(default_factory=set)
    targets: list = field(default_factory=list)  # (kind, full name, anchor id, title)
    warnings: list = field(default_factory=list)


def anchor(kind: str, full: str) -> str:
    return "rulebook-" + re.sub(r"[^A-Za-z0-9]+", "-", f"{kind}-{full}").strip("-").lower()


def _target(page: Page, kind: str, full: str, title: str) -> str:
    aid = anchor(kind, full)
    page.targets.append((kind, full, aid, title))
    return f".. rulebook:target:: {kind} {full}\n\n"


def _doc_para(doc: ir.Doc | None) -> str:
    if doc is None or not doc.text:
        return ""
    out = rst.esc(doc.text) + "\n\n"
    if doc.ref:
        out += f"*Rulebook:* {rst.esc(doc.ref)}\n\n"
    return out


def _source_of(game: Game, kind: str, name: str) -> str:
    it = game.symbols.items.get((kind, name))
    if it is None:
        return ""
    m = it.tree.meta
    return it.text[m.start_pos:m.end_pos] if not m.empty else ""


def _span_text(sources: dict, span) -> str:
    return E.English(sources).source(type("N", (), {"span": span})()) or ""


def _repo_path(path: str) -> str:
    """A spec's path as the reader knows it (``spec/x.rules``), wherever the build runs."""
    from ..lang.sources import find_spec
    try:
        p = find_spec(Path(path).stem).resolve()
    except RulebookError:
        p = Path(path).resolve()
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        try:
            return str(p.relative_to(root))
        except ValueError:
            continue
    return path


def _current(game: Game, stored: dict) -> bool:
    """Whether stored results are current, judged under the parameters they were made with: a
    proof made at smaller bounds than the game's own (a capacity parameter set lower) is current
    while the spec under those bounds is the program it proved."""
    variants = tuple(stored.get("variants") or ())
    if not variants and current(game, stored):
        return True
    params = stored.get("params") or {}
    if not variants and all(game.p.param_values.get(k) == v for k, v in params.items()):
        return False
    return current(load_game(game.name, variants, tuple(sorted(params.items()))), stored)


def _staleness(game: Game, stored: dict | None, what: str) -> str:
    if not stored or "spec_sha256" not in stored or _current(game, stored):
        return ""
    return (f".. note::\n\n   The spec has changed since these {what} were stored "
            f"({stored.get('generated', '?')}): they are shown as stored, for the spec as it "
            f"was then. Refresh them with ``python docs/refresh.py {game.name}``.\n\n")


def _sources(game: Game) -> dict[str, str]:
    return {f.path: f.text for f in game.symbols.files}


def _calls(node) -> list[str]:
    """The defs an IR node calls directly or through other defs, in order of first use."""
    seen: list[str] = []
    for n in nodes(node):
        if isinstance(n, ir.Call) and n.name not in seen:
            seen.append(n.name)
    return seen


# ---- a game page --------------------------------------------------------------------------

def page_game(name: str) -> Game:
    """The game a page shows.  An expansion's page (tours-de-pouvoir) shows its base game with
    it, under the expansion's own name and title: its targets must not clash with the base
    page's, and its witnesses are replayed by loading it, expansion included."""
    import copy
    import dataclasses
    g = load_game(name)
    if g.name == name:
        return g
    g = copy.copy(g)          # a copy: `load_game` results are shared
    g.name = name
    g.p = dataclasses.replace(g.p, title=g.symbols.files[-1].title)
    return g


def game_page(name: str, witness_dir: Path, proof_dir: Path) -> Page:
    """The page of one game: set-up, turn structure, rules, examples, readings, invariants."""
    from ..lang.sources import find_spec
    from ..queries.examples import run_examples
    from ..render.render import render_svg
    g = page_game(name)
    page = Page("")
    page.depends.update(str(Path(find_spec(Path(f).stem)).resolve()) for f in g.p.files)
    src = _sources(g)
    en = E.for_program(g.p, src)
    out = [f".. This page is generated from {', '.join(map(_repo_path, g.p.files))} by "
           f"solver/docs/sphinxext.py.\n\n"]
    out.append(_target(page, "game", name, g.p.title))
    out.append(rst.title(g.p.title, "="))
    out.append(f"Generated at build time from :file:`{_repo_path(g.p.files[-1])}` (game "
               f"``{name}``). "
               f"Every rule below is the spec's own text; the English sentences are produced "
               f"from the checked rules by ``solver.docs.english``, and the verdicts by running "
               f"the interpreter while this page was built.\n\n")
    examples = run_examples(name)
    out.append(_glance(g, examples, stored_proofs(proof_dir / f"{name}.json"),
                       render_svg(g, g.initial(), title=f"{name}: the set-up")))
    out.append(".. contents:: On this page\n   :local:\n   :depth: 1\n   :backlinks: none\n\n")
    out.append(_setup_section(g, page, en))
    out.append(_turn_section(g, page, en))
    out.append(_rules_section(g, page, en, src))
    out.append(_defs_section(g, page, en))
    out.append(_examples_section(g, page, examples))
    out.append(_readings_section(g, page, witness_dir / f"{name}.json"))
    out.append(_invariants_section(g, page, en, proof_dir / f"{name}.json"))
    out.append(_puzzles_section(g, page))
    page.text = "".join(out)
    return page


def _glance(g: Game, examples, proofs: tuple, setup_svg: str) -> str:
    """The page's summary, beside the set-up drawn (so the top of every page has a picture).
    ``proofs``: what `stored_proofs` gives."""
    proofs, _, results = proofs
    acts = g.p.actions
    n_rules = sum(isinstance(s, ir.Requires) for a in acts for s in a.body)
    chance = sum(a.chance for a in acts)
    bad = [r.name for r in examples if not r.confirmed]
    items = [f"**{len(acts)} moves** ({len(acts) - chance} by the players, {chance} by chance) "
             f"with **{n_rules} named rules**"]
    if examples:
        items.append(f"**{len(examples)} worked examples**: "
                     + (f"{len(examples)} confirmed" if not bad
                        else f"{len(examples) - len(bad)} confirmed, **{len(bad)} contradicted** "
                             f"({', '.join(bad)})"))
    if g.p.readings:
        items.append(f"**{len(g.p.readings)} readings** where the book is silent: "
                     + ", ".join(f"{rst.ref('reading', f'{g.name}.{r.name}', r.name)} "
                                 f"(default ``{r.default}``)" for r in g.p.readings))
    if g.p.invariants:
        stored = {n: r.get("status", "unknown") for n, r in results.items()}
        counts: dict[str, int] = {}
        for inv in g.p.invariants:
            st = stored.get(inv.name, "not proved")
            counts[st] = counts.get(st, 0) + 1
        depth = (proofs or {}).get("depth")
        words_ = {"inductive": "inductive", "holds": f"hold up to depth {depth}",
                  "refuted": "refuted", "unknown": "unknown", "not proved": "not proved"}
        items.append(f"**{len(g.p.invariants)} invariants**: "
                     + ", ".join(f"{n} {words_.get(k, k)}" for k, n in counts.items())
                     + (f" (stored {proofs.get('generated', '?')})" if proofs else ""))
    if g.p.puzzles:
        items.append(f"**{len(g.p.puzzles)} puzzle(s)**: "
                     + ", ".join(f"``{p.name}``" for p in g.p.puzzles))
    body = "".join(f"* {i}\n" for i in items)
    return (".. container:: rulebook-glance\n\n"
            "   .. container:: rulebook-glance-text\n\n"
            + textwrap.indent(body, "      ") + "\n"
            + textwrap.indent(rst.raw_html(f'<div class="rulebook-setup-figure">{setup_svg}</div>'),
                              "   "))


def _setup_section(g: Game, page: Page, en: E.English) -> str:
    out = [rst.title("Components and set-up", "-")]
    if g.p.params:
        out.append(rst.title("Parameters", "~"))
        out.append(rst.table(["parameter", "values", "default", "meaning"],
                          [[f"``{p.name}``", f"``{p.type}``", f"``{p.default}``",
                            rst.esc(p.doc.text)] for p in g.p.params], "15 15 10 60"))
    kinds = {"enum_decl": "Enumerations", "record_decl": "Records", "type_decl": "Types",
             "const_decl": "Constants"}
    statics = [g.symbols.items[k] for k in g.symbols.order if k[0] == "static"]
    for data, heading in kinds.items():
        its = [it for it in statics if it.tree.data == data]
        if not its:
            continue
        out.append(rst.title(heading, "~"))
        for it in its:
            m = it.tree.meta
            out.append(rst.code(it.text[m.start_pos:m.end_pos]))
            out.append(_doc_para(it.doc))
    out.append(rst.title("State", "~"))
    out.append("Everything a position of the game holds; every field is finite.  A field "
               "marked (internal) is bookkeeping the rules need, left out of the pictures.\n\n")
    written = _state_types(g)
    out.append(rst.table(["field", "type", "meaning"],
                      [[f"``{f.name}``", rst.inline_code(written.get(f.name, str(f.type))),
                        ("(internal) " if f.internal else "") + rst.esc(f.doc.text)]
                       for f in g.p.state], "20 30 50"))
    init = _source_of(g, "init", "init")
    if init:
        out.append(rst.title("Set-up (init)", "~"))
        out.append("Every field starts at its type's default (empty, 0, the first member, "
                   "false); ``init`` then sets:\n\n")
        out.append(rst.code(init))
    return "".join(out)


def _state_types(g: Game) -> dict[str, str]:
    """Each state field's type as the spec writes it (``map[Player, 0..9]``), not resolved."""
    it = g.symbols.items.get(("state", "state"))
    out: dict[str, str] = {}
    for part in ([it] + list(it.extra)) if it is not None else []:
        for f in part.tree.children:
            if getattr(f, "data", None) != "state_field":
                continue
            t = f.children[-1]
            m = getattr(t, "meta", None)
            if m is not None and not m.empty:
                out[str(f.children[-2])] = part.text[m.start_pos:m.end_pos]
    return out


def _turn_section(g: Game, page: Page, en: E.English) -> str:
    out = [rst.title("Turn structure", "-")]
    actor, terminal = _source_of(g, "actor", "actor"), _source_of(g, "terminal", "terminal")
    if actor:
        out.append("Whose move it is:\n\n" + rst.code(actor))
    rotate = _source_of(g, "rotate", "rotate")
    if rotate:
        doc = g.symbols.items[("rotate", "rotate")].doc.text
        out.append((rst.esc(doc) if doc else
                    "The players may be numbered from any one of them (not a rule: what "
                    "``rulebook prove --symmetry`` uses, and checks, across the cases of the "
                    "player to move).") + "\n\n" + rst.code(rotate))
    if terminal:
        out.append("When the game ends:\n\n" + rst.code(terminal))
        if g.p.terminal is not None:
            out.append(f"*In English:* the game is over when {rst.esc(en.clause(g.p.terminal))}."
                       "\n\n")
    gates = _gates(g)
    for fname, members in gates.items():
        out.append(f"The state field ``{fname}`` steps through "
                   f"{', '.join(f'``{m}``' for m in members)}; each move's rules say when it "
                   f"may be played:\n\n")
        out.append(rst.table([f"{fname}", "moves allowed"],
                          [[f"``{m}``", ", ".join(rst.ref("action", f"{g.name}.{a}", a)
                                                   for a in acts) or "–"]
                           for m, acts in members.items()], "20 80"))
    rows = []
    for a in g.p.actions:
        n_req = sum(isinstance(s, ir.Requires) for s in a.body)
        rows.append([rst.ref("action", f"{g.name}.{a.name}", a.name),
                     "chance" if a.chance else "player",
                     ", ".join(f"``{b.name}``" for b in a.params) or "–",
                     str(n_req), rst.esc(a.doc.text)])
    out.append("The moves, in the order of the spec (a *chance* move is the dealer's: drawn "
               "with the weight the spec gives it):\n\n")
    out.append(rst.table(["move", "by", "parameters", "rules", "what it does"], rows,
                      "14 8 12 6 60"))
    return "".join(out)


def _gates(g: Game) -> dict[str, dict[str, list[str]]]:
    """For each enum state field that some `requires` tests with ``field == member``: which
    moves each of its values allows (the phases of a turn, whatever the spec calls them)."""
    from ..lang.types import EnumT
    out: dict[str, dict[str, list[str]]] = {}
    for a in g.p.actions:
        for s in a.body:
            if not isinstance(s, ir.Requires):
                continue
            for n in _conjuncts(s.cond):
                if isinstance(n, ir.Binary) and n.op == "==" and isinstance(n.left, ir.Field) \
                        and isinstance(n.left.record, ir.StateRef) \
                        and isinstance(n.right, ir.Const) and isinstance(n.right.type, EnumT):
                    t = n.right.type
                    table = out.setdefault(n.left.name, {m: [] for m in t.members})
                    acts = table.setdefault(t.members[n.right.value], [])
                    if a.name not in acts:
                        acts.append(a.name)
    return out


def _conjuncts(e) -> list:
    if isinstance(e, ir.Binary) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _rules_section(g: Game, page: Page, en: E.English, src: dict) -> str:
    out = [rst.title("Rules", "-")]
    out.append("Each move with its rules: a move is legal when every ``requires`` holds; "
               "the first that fails names the rule that forbids it (``rulebook moves --all``)."
               "\n\n")
    for a in g.p.actions:
        full = f"{g.name}.{a.name}"
        out.append(_target(page, "action", full, a.name))
        out.append(rst.title(f"{'chance' if a.chance else 'action'} {a.name}", "~"))
        out.append(_doc_para(a.doc))
        out.append(rst.code(a.source or _source_of(g, "action", a.name)))
        for s in a.body:
            if not isinstance(s, ir.Requires):
                continue
            rfull = f"{full}.{s.name}"
            out.append(_target(page, "rule", rfull, f"{a.name}.{s.name}"))
            out.append(f".. rubric:: Rule {a.name}.{s.name}\n\n")
            if s.message:
                out.append(f"*{rst.esc(s.message)}*\n\n")
            text = _span_text(src, s.span)
            if text:
                out.append(rst.code(text))
            out.append(f"**In English:** {rst.esc(E.rule_sentence(en, a, s))}\n\n")
            uses = [n for n in _calls(s.cond) if ("def", n) in g.symbols.items]
            if uses:
                out.append("Uses " + ", ".join(rst.ref("def", f"{g.name}.{n}", n) for n in uses)
                           + ", where:\n\n")
                for n in uses:
                    call = E.checked_def(g, n)
                    if call is not None:
                        out.append(f"* {rst.esc(E.def_sentence(en, call))}\n")
                out.append("\n")
    procs = [k[1] for k in g.symbols.order if k[0] == "proc"]
    if procs:
        out.append(rst.title("Shared steps (procs)", "~"))
        for n in procs:
            it = g.symbols.items[("proc", n)]
            out.append(_target(page, "def", f"{g.name}.{n}", n))
            out.append(f".. rubric:: proc {n}\n\n")
            out.append(_doc_para(it.doc))
            out.append(rst.code(_source_of(g, "proc", n)))
    return "".join(out)


def _defs_section(g: Game, page: Page, en: E.English) -> str:
    names = [k[1] for k in g.symbols.order if k[0] == "def"]
    if not names:
        return ""
    out = [rst.title("Definitions", "-")]
    out.append("The pure functions the rules use, each with its English reading.\n\n")
    for n in names:
        it = g.symbols.items[("def", n)]
        out.append(_target(page, "def", f"{g.name}.{n}", n))
        out.append(f".. rubric:: def {n}\n\n")
        out.append(_doc_para(it.doc))
        out.append(rst.code(_source_of(g, "def", n)))
        call = E.checked_def(g, n)
        if call is not None:
            out.append(f"**In English:** {rst.esc(E.def_sentence(en, call))}\n\n")
            uses = [c for c in _calls(call.body) if c != n and ("def", c) in g.symbols.items]
            if uses:
                out.append("Uses " + ", ".join(rst.ref("def", f"{g.name}.{c}", c) for c in uses)
                           + ".\n\n")
    return "".join(out)


def _has_rule(g: Game, action: str, rule: str) -> bool:
    a = next((a for a in g.p.actions if a.name == action), None)
    return a is not None and any(isinstance(s, ir.Requires) and s.name == rule for s in a.body)


def _examples_section(g: Game, page: Page, results) -> str:
    if not results:
        return ""
    out = [rst.title("Worked examples", "-")]
    ok = sum(r.confirmed for r in results)
    out.append(f"The rulebook's worked examples, run in the interpreter while this page was "
               f"built: **{ok} of {len(results)} confirmed**. A *contradicted* example is "
               f"shown as such: the rules are never bent to match the book.\n\n")
    for r in results:
        out.append(_target(page, "example", f"{g.name}.{r.name}", r.name))
        verdict = "confirmed" if r.confirmed else "CONTRADICTED"
        out.append(f".. rubric:: Example {r.name}: {verdict}\n\n")
        out.append(f".. container:: rulebook-verdict rulebook-{verdict.lower()}\n\n"
                   f"   Verdict: **{verdict}**\n\n")
        out.append(_doc_para(ir.Doc(r.doc, r.ref)))
        out.append(rst.code(_source_of(g, "example", r.name)))
        rows = [[rst.inline_code(o.text), "confirmed" if o.ok else "**contradicted**",
                 rst.inline_code(json.dumps(o.computed, ensure_ascii=False)),
                 rst.inline_code(json.dumps(o.book, ensure_ascii=False))] for o in r.outcomes]
        out.append(rst.table(["expectation", "verdict", "the rules compute", "the book says"],
                          rows, "40 14 23 23"))
        cited = []
        for o in r.outcomes:
            for act, rule in re.findall(r"illegal (\w+)\(.*\) because (\w+)", o.text):
                if (act, rule) not in cited and _has_rule(g, act, rule):
                    cited.append((act, rule))
        if cited:
            out.append("Rules this example cites: " + ", ".join(
                rst.ref("rule", f"{g.name}.{a}.{ru}", f"{a}.{ru}") for a, ru in cited) + ".\n\n")
    return "".join(out)


# ---- readings: stored witnesses, replayed -------------------------------------------------

def load_stored(path: Path) -> dict | None:
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def stored_proofs(path: Path) -> tuple[dict | None, list, dict]:
    """The stored proof at ``path`` (docs/proofs/<game>.json), the other proofs of the game
    under the same parameters and readings that prove more invariants inductive
    (docs/proofs/<game>-*.json: part of the invariants proved alone, where the whole step is
    out of reach) as (path, stored) pairs, and the result of each invariant: the first
    proof's, unless another proves it inductive (the union of inductive sets is inductive).
    A proof under other readings (``variants``) proves nothing of these rules: see
    `other_readings`."""
    stored = load_stored(path)
    results = {r["invariant"]: r for r in (stored or {}).get("results", [])}
    also = []
    for p in sorted(path.parent.glob(f"{path.stem}-*.json")) if stored else ():
        more = load_stored(p)
        if not more or more.get("params") != stored.get("params") \
                or more.get("variants") != stored.get("variants"):
            continue
        proved = [r for r in more.get("results", []) if r["status"] == "inductive"
                  and results.get(r["invariant"], {}).get("status") != "inductive"]
        if proved:
            also.append((p, more))
            for r in proved:
                results[r["invariant"]] = {**r, "detail": f"docs/proofs/{p.name}"}
    return stored, also, results


def other_readings(path: Path) -> list:
    """The stored proofs of the game of ``path`` made under readings other than the spec's
    defaults (``variants``), as (path, stored) pairs: each holds of those readings only."""
    out = []
    for p in sorted(path.parent.glob(f"{path.stem}-*.json")):
        more = load_stored(p)
        if more and more.get("variants"):
            out.append((p, more))
    return out


def replay_witness(game_name: str, w: dict, params: dict) -> tuple[bool, str, object, Game]:
    """Replay a stored witness under both readings.  Returns (still disagrees, explanation,
    the concrete state, the game under reading a)."""
    from ..queries.readings import outcome
    variants_a = (f"{w['reading']}:{w['a']}",)
    variants_b = (f"{w['reading']}:{w['b']}",)
    ptuple = tuple(sorted(params.items()))
    ga = load_game(game_name, variants_a, ptuple)
    gb = load_game(game_name, variants_b, ptuple)
    st = list(ga.initial())
    for k, v in (w.get("state") or {}).items():
        if k not in ga.field_index:
            return False, f"the stored state has a field {k!r} the spec no longer has", None, ga
        i = ga.field_index[k]
        st[i] = from_json(ga.p.state[i].type, v, f"witness state.{k}")
    st = tuple(st)
    if w.get("move"):
        name, *args = w["move"]
        act = ga.action(name)
        params_ = tuple(from_json(b.domain.elem, j, f"witness move {name}")
                        for b, j in zip(act.ir.params, args))
        m = Move(name, params_)
        ra, rb = outcome(ga, st, m), outcome(gb, st, m)
        if ra == rb:
            return False, f"move {w['move']} now has the same outcome under both readings", \
                st, ga
        say = lambda r: "legal" if r[0] == "legal" else f"illegal (rule {r[1]})"  # noqa: E731
        return True, f"{w['a']}: {say(ra)}; {w['b']}: {say(rb)}", st, ga
    # A disagreement about the end: the score, or (a tie-break) who wins.
    fn = "winner" if w.get("disagree_on") == "winner" else "score"
    if not ga.has_def(fn):
        return False, f"a {fn} disagreement, but the game has no {fn}", st, ga
    from ..lang.types import finite
    pt = ga.p.types.get("Player")
    sa = ga.expr(f"{fn}(p)", {"p": pt})[0]
    sb = gb.expr(f"{fn}(p)", {"p": pt})[0]
    verb = "scores" if fn == "score" else "wins:"
    for p in finite(pt).values:
        if sa(st, p) != sb(st, p):
            return True, (f"{w['a']}: player {p} {verb} {sa(st, p)}; "
                          f"{w['b']}: player {p} {verb} {sb(st, p)}"), st, ga
    return False, f"the {fn}s now agree under both readings", st, ga


def _fields_read(node) -> set[str]:
    """The state fields an IR node reads (through the defs it calls, too)."""
    return {n.name for n in nodes(node)
            if isinstance(n, ir.Field) and isinstance(n.record, ir.StateRef)}


def disagreement_fields(game_name: str, w: dict, params: dict) -> tuple[set[str], str]:
    """Which fields to mark on a witness, and why: the fields whose values the two readings
    leave different; for a move legal under one reading only, the fields the refusing rule
    reads; for a score, the fields the score reads."""
    if w.get("fields"):
        return set(w["fields"]), "the fields the two readings leave different"
    ptuple = tuple(sorted(params.items()))
    if w.get("move"):
        for side in ("a", "b"):
            m = re.search(r"illegal \(rule (\w+)\)", w.get(f"under_{side}", ""))
            if not m:
                continue
            g = load_game(game_name, (f"{w['reading']}:{w[side]}",), ptuple)
            act = g.action(w["move"][0]).ir
            for s in act.body:
                if isinstance(s, ir.Requires) and s.name == m.group(1):
                    read = _fields_read(s.cond)
                    if read:
                        return read, (f"the fields rule {act.name}.{s.name} reads (it refuses "
                                      f"the move under {w[side]})")
                    # The rule tests only the reading: mark where the move's arguments come from.
                    return (set().union(*(_fields_read(b.domain) for b in act.params)),
                            f"where the arguments of {act.name} come from (rule "
                            f"{act.name}.{s.name} tests only the reading)")
        return set(), ""
    g = load_game(game_name, (f"{w['reading']}:{w['a']}",), ptuple)
    call = E.checked_def(g, "score") if g.has_def("score") else None
    return (_fields_read(call) if call is not None else set()), "the fields the score reads"


def _readings_section(g: Game, page: Page, path: Path) -> str:
    from ..render.render import render_svg
    if not g.p.readings:
        return ""
    stored = load_stored(path)
    page.depends.add(str(path.resolve()))
    out = [rst.title("Readings: where the book is silent", "-")]
    out.append("Each point the rulebook leaves open is a named ``reading`` with a default. "
               "For each pair of options, a smallest state and a move on which they disagree "
               "was found by Z3 (``rulebook ambiguities``) ")
    if stored:
        out.append(f"on {stored.get('generated', '?')} (``{stored.get('command', '')}``, "
                   f"stored in :file:`docs/witnesses/{path.name}`). While this page was built, "
                   f"every stored witness was replayed in the interpreter under both readings "
                   f"and still disagrees. Refresh them with ``python docs/refresh.py {g.name} "
                   f"--only witnesses``.\n\n")
    else:
        out.append(f"— but no witnesses are stored for this game yet: run ``python "
                   f"docs/refresh.py {g.name} --only witnesses``.\n\n")
    out.append(_staleness(g, stored, "witnesses"))
    ws = (stored or {}).get("ambiguities", [])
    params = (stored or {}).get("params", {})
    for r in g.p.readings:
        out.append(_target(page, "reading", f"{g.name}.{r.name}", r.name))
        out.append(rst.title(f"reading {r.name}", "~"))
        out.append(_doc_para(r.doc))
        out.append(rst.code(_source_of(g, "static", r.name)))
        out.append(rst.table(["option", "meaning", "default"],
                          [[f"``{o}``", rst.esc(d), "**default**" if o == r.default else ""]
                           for o, d in r.options], "15 70 15"))
        mine = [w for w in ws if w.get("reading") == r.name]
        pairs = {(w.get("a"), w.get("b")) for w in mine}
        names = [o for o, _ in r.options]
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if (a, b) not in pairs and stored is not None:
                    page.warnings.append(f"{path}: no stored witness for {r.name}: {a} vs {b} "
                                         f"(run python docs/refresh.py {g.name} --only "
                                         f"witnesses)")
        for w in mine:
            out.append(f".. rubric:: {r.name}: {w['a']} vs {w['b']}\n\n")
            if w.get("found") is None:
                out.append("Z3 gave up (*unknown*) when the witnesses were stored.\n\n")
                continue
            if not w.get("found"):
                out.append("The two readings agree on every state and move: no witness "
                           "exists.\n\n")
                continue
            try:
                ok, why, st, ga = replay_witness(g.name, w, w.get("params", params))
            except (RulebookError, KeyError, TypeError, ValueError) as e:
                ok, why, st, ga = False, f"cannot be replayed: {e}", None, None
            if not ok:
                page.warnings.append(f"{path}: stale witness for {r.name} ({w['a']} vs "
                                     f"{w['b']}): {why}; refresh it with python "
                                     f"docs/refresh.py {g.name} --only witnesses")
                out.append(f"**Stale witness:** {rst.esc(why)}.\n\n")
                continue
            move = " ".join(json.dumps(x, ensure_ascii=False) for x in (w.get("move") or []))
            out.append(f"{'Smallest' if w.get('minimal') else 'A small'} witness "
                       f"({w.get('size')} element{'' if w.get('size') == 1 else 's'}): "
                       + (f"the move ``{move}`` " if move else "")
                       + f"— they disagree about the **{rst.esc(w.get('disagree_on', ''))}**. "
                       f"Replayed now: {rst.esc(why)}.")
            refusing = re.findall(r"illegal \(rule (\w+)\)", why)
            if w.get("move") and refusing and _has_rule(g, w["move"][0], refusing[0]):
                out.append(" The refusing rule: " + rst.ref(
                    "rule", f"{g.name}.{w['move'][0]}.{refusing[0]}",
                    f"{w['move'][0]}.{refusing[0]}") + ".")
            url = f"{EXPLORER}/compare?game={g.name}&witness={r.name}:{w['a']}:{w['b']}"
            out.append(f" Open it in the explorer, with every move under both readings "
                       f"(start it with ``rulebook serve``): `{r.name}: {w['a']} vs {w['b']} "
                       f"<{url}>`__.")
            if w.get("note"):
                out.append(f" Note: {rst.esc(w['note'])}.")
            out.append("\n\n")
            hl, why_marked = disagreement_fields(g.name, w, params)
            hl = {f for f in hl if f in ga.field_index} or None
            note = (f"move: {move}\n" if move else "") + \
                f"{w['a']}: {w.get('under_a', '')}\n{w['b']}: {w.get('under_b', '')}"
            if hl:
                out.append(f"Marked in red: {rst.esc(why_marked)}.\n\n")
            from ..render.board import move_marks, move_path
            svg = render_svg(ga, st, highlight=hl,
                             title=f"{g.name}: where {r.name} readings disagree", note=note,
                             marks=move_marks(ga, w.get("move")),
                             path=move_path(ga, w.get("move"), st))
            out.append(rst.raw_html(f'<div class="rulebook-witness" data-reading="{r.name}">'
                                 f'{svg}</div>'))
    known = {r.name for r in g.p.readings}
    for w in ws:
        if w.get("reading") not in known:
            page.warnings.append(f"{path}: stored witness for {w.get('reading')!r}, which the "
                                 f"spec no longer declares")
    return "".join(out)


def _reused(stored: dict) -> str:
    """What a stored proof's run took from the proof store, when it says and took some."""
    paths = stored.get("paths")
    if not isinstance(paths, dict) or not paths.get("reused"):
        return ""
    return (f", {paths['reused']:,} of {paths.get('total', 0):,} path queries reused from "
            f"the proof store")


def _invariants_section(g: Game, page: Page, en: E.English, path: Path) -> str:
    if not g.p.invariants:
        return ""
    page.depends.add(str(path.resolve()))
    stored, also, results = stored_proofs(path)
    for p, _ in also:
        page.depends.add(str(p.resolve()))
    out = [rst.title("Invariants", "-")]
    out.append("Properties claimed to hold in every reachable state. Proving takes minutes, "
               "so the docs build does not prove them: it shows the result stored ")
    if stored:
        out.append(f"on {stored.get('generated', '?')} by ``{stored.get('command', '')}`` "
                   f"({stored.get('seconds', '?')} s{_reused(stored)}; bounded model "
                   f"checking to depth "
                   f"{stored.get('depth', '?')}), in :file:`docs/proofs/{path.name}`. If the "
                   f"spec changed since, rerun ``python docs/refresh.py {g.name} --only "
                   f"proofs`` with that command's options: *inductive* means proved for every "
                   f"reachable state; *holds up to depth k* only that no counterexample exists "
                   f"within k moves of the start."
                   f"\n\n")
        for p, more in also:
            out.append(f"Other invariants were proved inductive, under the same parameters, "
                       f"on {more.get('generated', '?')} by ``{more.get('command', '')}`` "
                       f"({more.get('seconds', '?')} s{_reused(more)}), in "
                       f":file:`docs/proofs/{p.name}`: "
                       f"two sets each inductive are inductive together.\n\n")
        other = {k: v for k, v in (stored.get("params") or {}).items()
                 if g.p.param_values.get(k) != v}
        if other:
            out.append("These results are for the parameters "
                       + ", ".join(f"``{k}={v}``" for k, v in sorted(other.items()))
                       + " (the game's own: "
                       + ", ".join(f"``{k}={g.p.param_values.get(k)}``" for k in sorted(other))
                       + "); a proof holds for those parameters only.\n\n")
    else:
        out.append(f"— none is stored for this game yet (``python docs/refresh.py {g.name} "
                   f"--only proofs``).\n\n")
    out.append(_staleness(g, stored, "proof results"))
    for _, more in also:
        out.append(_staleness(g, more, "proof results"))
    elsewhere: dict[str, list[str]] = {}
    for p, more in other_readings(path):
        page.depends.add(str(p.resolve()))
        readings = ", ".join(f"``{v}``" for v in more["variants"])
        names = [r["invariant"] for r in more.get("results", []) if r["status"] == "inductive"]
        # Said beside an invariant's status where the default rules leave it unproved.
        for n in names:
            if results.get(n, {}).get("status") != "inductive":
                elsewhere.setdefault(n, []).append(
                    f"inductive under {', '.join(more['variants'])} (docs/proofs/{p.name})")
        out.append(f"Under the reading{'s' if len(more['variants']) > 1 else ''} {readings}, "
                   f"not the spec's default, "
                   + (", ".join(f"``{n}``" for n in names) or "no invariant")
                   + f" {'was' if len(names) == 1 else 'were'} proved inductive on "
                   f"{more.get('generated', '?')} by ``{more.get('command', '')}`` "
                   f"({more.get('seconds', '?')} s{_reused(more)}), in "
                   f":file:`docs/proofs/{p.name}`: a proof of that reading's rules only.\n\n")
        out.append(_staleness(g, more, "proof results"))
    rows = []
    for inv in g.p.invariants:
        r = results.get(inv.name)
        status = "; ".join([r["summary"] if r else "not proved (no stored result)",
                            *elsewhere.get(inv.name, [])])
        rows.append([rst.ref("invariant", f"{g.name}.{inv.name}", inv.name), rst.esc(status)])
    out.append(rst.table(["invariant", "status"], rows, "30 70"))
    for inv in g.p.invariants:
        out.append(_target(page, "invariant", f"{g.name}.{inv.name}", inv.name))
        out.append(f".. rubric:: {'transition' if inv.transition else 'invariant'} "
                   f"{inv.name}\n\n")
        out.append(_doc_para(inv.doc))
        out.append(rst.code(inv.source or ""))
        out.append(f"**In English:** {rst.esc(E.invariant_sentence(en, inv))}\n\n")
        r = results.get(inv.name)
        more = "".join(f"; {rst.esc(e)}" for e in elsewhere.get(inv.name, []))
        if r:
            out.append(f"**Status:** {rst.esc(r['summary'])}"
                       + (f" — {rst.esc(r['detail'])}" if r.get("detail") else "")
                       + more + "\n\n")
        else:
            out.append("**Status:** not proved: no stored result for this invariant"
                       + more + ".\n\n")
        uses = [c for c in _calls(inv.expr) if ("def", c) in g.symbols.items]
        if uses:
            out.append("Uses " + ", ".join(rst.ref("def", f"{g.name}.{c}", c) for c in uses)
                       + ".\n\n")
    return "".join(out)


def _puzzles_section(g: Game, page: Page) -> str:
    if not g.p.puzzles:
        return ""
    out = [rst.title("Puzzles", "-")]
    out.append("Questions the spec declares, answered by ``rulebook solve`` (see the "
               ":doc:`/cookbook`).\n\n")
    for p in g.p.puzzles:
        out.append(_target(page, "puzzle", f"{g.name}.{p.name}", p.name))
        out.append(f".. rubric:: puzzle {p.name}\n\n")
        out.append(_doc_para(p.doc))
        out.append(rst.code(_source_of(g, "puzzle", p.name)))
    return "".join(out)
