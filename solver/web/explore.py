"""What the explorer asks of a game, without HTTP: the game options of a request, states and
moves read from JSON (the CLI's formats and errors), a history replayed, the view of a state
(legal moves, refused moves grouped by rule, actor, phase, scores), seeded random players,
two readings compared on one state, the stored ambiguity witnesses and the puzzles.

Everything is a function of its arguments: the browser holds the start state and the moves,
and each request replays them (a whole game replays in well under a second)."""
from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..engine.evaluate import Refused
from ..engine.game import Game, Move, load_game
from ..lang.codec import from_json, to_json
from ..lang.errors import EvalError, InputError, RulebookError
from ..lang.jsonpos import locate
from ..lang.resources import REPO, spec_dir
from ..lang.sources import find_spec, read_source
from ..lang.types import IntT, finite

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
MAX_STEPS = 20_000         # a random player gives up after this many moves (no end in sight)
EXAMPLES_SHOWN = 60        # refused moves listed per (action, rule); the rest are counted


class UnknownGame(InputError):
    """A game name that names no spec: the web answers 404."""


class IllegalMove(InputError):
    """A move the rules refuse (or that names no action instance): the web answers 422."""

    def __init__(self, message: str, rule: str = "", why: str = ""):
        super().__init__(message)
        self.rule = rule
        self.why = why


# ---- the game options of a request ----------------------------------------------------------

@dataclass(frozen=True)
class Options:
    """A game under chosen variants (expansions, and readings as READING:OPTION) and
    parameters: what `--variant`, `--players` and `--param` choose on the command line."""

    game: str
    variants: tuple[str, ...] = ()
    params: tuple[tuple[str, int], ...] = ()

    def load(self) -> Game:
        return load_game(self.game, self.variants, self.params)

    def with_variant(self, v: str) -> "Options":
        """These options with one more variant (a reading's option replaces its other one)."""
        if ":" in v:
            r = v.partition(":")[0]
            keep = tuple(x for x in self.variants if x.partition(":")[0] != r or ":" not in x)
            return Options(self.game, keep + (v,), self.params)
        return Options(self.game, self.variants + ((v,) if v not in self.variants else ()),
                       self.params)

    def query(self) -> str:
        """The query string of a page for these options (without the game)."""
        from urllib.parse import urlencode
        items = [("variant", v) for v in self.variants]
        items += [(f"param.{k}", str(n)) for k, n in self.params]
        return urlencode(items)

    def as_json(self) -> dict:
        return {"game": self.game, "variants": list(self.variants), "params": dict(self.params)}


def check_game_name(name: str) -> str:
    """``name`` when it names a spec (of spec/ or $RULEBOOK_SPECS); else `UnknownGame`."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise UnknownGame(f"no game named {name!r} (known: {', '.join(game_names())})")
    try:
        find_spec(name)
    except RulebookError as e:
        raise UnknownGame(e.message) from None
    return name


def options(game: str, variants, params: dict, where: str = "") -> Options:
    """Options checked against the game: every variant loads, every parameter is one of the
    game's (an unknown name or a value out of range is an error, not ignored)."""
    check_game_name(game)
    if not isinstance(variants, (list, tuple)) or not all(isinstance(v, str) for v in variants):
        raise InputError(f"{where}variants: expected a list of names")
    variants = tuple(dict.fromkeys(v.strip() for v in variants if v.strip()))
    # A reading at its default is left out: the same game, compiled once (load_game's cache).
    defaults = {r.name: r.default
                for r in load_game(game, tuple(v for v in variants if ":" not in v)).p.readings}
    variants = tuple(v for v in variants if ":" not in v or
                     defaults.get(v.partition(":")[0].strip()) != v.partition(":")[2].strip())
    base = load_game(game, variants)
    known = {p.name: p for p in base.p.params}
    if not isinstance(params, dict):
        raise InputError(f"{where}params: expected an object of NAME: N")
    out = []
    for k, n in params.items():
        if k not in known:
            raise InputError(f"{where}params.{k}: {game} has no parameter {k!r} (parameters: "
                             f"{', '.join(known) or 'none'})")
        if isinstance(n, str) and re.fullmatch(r"-?\d+", n.strip()):
            n = int(n)
        if not isinstance(n, int) or isinstance(n, bool):
            raise InputError(f"{where}params.{k}: expected a whole number, found {n!r}")
        t = known[k].type
        if isinstance(t, IntT) and not t.lo <= n <= t.hi:
            raise InputError(f"{where}params.{k}: {n} is outside {t.lo}..{t.hi}")
        if n != base.p.param_values.get(k):
            out.append((k, n))
    opts = Options(game, variants, tuple(sorted(out)))
    opts.load()
    return opts


def options_from_query(game: str, items: list[tuple[str, str]]) -> tuple[Options, dict]:
    """Options from a page's query string: ``variant`` (repeatable: an expansion or
    READING:OPTION), ``players``, ``param.NAME=N`` or ``param=NAME=N``; and the start
    (``seed``, ``move``) as whole numbers.  An unknown key is an error."""
    variants: list[str] = []
    params: dict = {}
    start: dict = {}
    for k, v in items:
        if k == "variant":
            variants.append(v)
        elif k == "players":
            params["players"] = v
        elif k.startswith("param."):
            params[k[len("param."):]] = v
        elif k == "param":
            name, eq, val = v.partition("=")
            if not eq or not name.strip():
                raise InputError(f"param={v}: expected NAME=N")
            params[name.strip()] = val
        elif k in ("seed", "move"):
            if not re.fullmatch(r"\d+", v.strip()):
                raise InputError(f"{k}={v}: expected a whole number (0 or more)")
            start[k] = int(v)
        else:
            raise InputError(f"unknown option {k!r} in the query string (options: variant, "
                             f"players, param.NAME, seed, move)")
    return options(game, variants, params), start


def options_from_json(obj, where: str = "") -> Options:
    if not isinstance(obj, dict):
        raise InputError(f"{where or 'request'}: expected a JSON object")
    game = obj.get("game")
    if not isinstance(game, str):
        raise InputError(f"{where}game: missing or not a string")
    return options(game, obj.get("variants", []), obj.get("params", {}) or {}, where)


# ---- the games of spec/ -------------------------------------------------------------------

def game_names() -> list[str]:
    return sorted(p.stem for p in spec_dir().glob("*.rules"))


def catalogue() -> list[dict]:
    """Each base game of spec/ with its title, expansions, readings and parameters."""
    bases: dict[str, list[str]] = {}
    order = []
    for name in game_names():
        src = read_source(find_spec(name))
        if src.base is None:
            bases.setdefault(name, [])
            order.append(name)
        else:
            bases.setdefault(src.base, []).append(name)
    out = []
    for name in order:
        g = load_game(name)
        out.append({"game": name, "title": g.p.title, "expansions": bases[name],
                    "readings": [{"name": r.name, "default": r.default,
                                  "options": [{"name": o, "doc": d} for o, d in r.options]}
                                 for r in g.p.readings],
                    "params": [{"name": p.name, "default": g.p.param_values.get(p.name),
                                "lo": getattr(p.type, "lo", None),
                                "hi": getattr(p.type, "hi", None)} for p in g.p.params]})
    return out


def expansions_of(game: str) -> list[str]:
    """The specs that extend ``game`` directly."""
    out = []
    for name in game_names():
        if name != game and read_source(find_spec(name)).base == game:
            out.append(name)
    return out


# ---- JSON in and out ----------------------------------------------------------------------

def parse_json(text: str, where: str):
    """The JSON value of ``text``; an error says where, as `rulebook` does for a file."""
    if not isinstance(text, str):
        raise InputError(f"{where}: expected JSON text")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None


def state_json(g: Game, st) -> dict:
    return {f.name: to_json(f.type, v) for f, v in zip(g.p.state, st)}


def read_state(g: Game, obj, where: str = "state"):
    """A state from a JSON object of fields; missing fields keep their initial value (the
    format of ``rulebook moves --state``).  None: the initial state."""
    if obj is None:
        return g.initial()
    return g.state_from_json(obj, where)


def read_state_text(g: Game, text: str, where: str = "state"):
    """`read_state` of pasted text, an error located at its line and column."""
    obj = parse_json(text, where)
    try:
        return read_state(g, obj, where)
    except InputError as e:
        raise locate(e, where, text) from None


def read_move(g: Game, j, where: str = "move") -> Move:
    """A move from its JSON: ``[action, argument...]`` (as `rulebook moves --json` prints)."""
    if not isinstance(j, list) or not j or not isinstance(j[0], str):
        raise InputError(f"{where}: a move is a JSON list [action, arguments...], found "
                         f"{json.dumps(j)[:80]}")
    try:
        a = g.action(j[0])
    except InputError as e:
        raise InputError(f"{where}: {e.message}") from None
    if len(j) - 1 != len(a.ir.params):
        raise InputError(f"{where}: {a.name} takes {len(a.ir.params)} argument(s), found "
                         f"{len(j) - 1}")
    return Move(a.name, tuple(from_json(b.domain.elem, x, f"{where}[{i + 1}]")
                              for i, (b, x) in enumerate(zip(a.ir.params, j[1:]))))


def apply_move(g: Game, st, m: Move, where: str = "move"):
    """The state after ``m``; `IllegalMove` naming the rule that refuses it."""
    try:
        return g.apply(st, m, check_domain=True)[0]
    except Refused as r:
        raise IllegalMove(f"{where}: {m.label(g)} is refused by rule {r.rule}: {r.message}",
                          r.rule, r.message) from None


def replay(g: Game, start, moves, where: str = "moves"):
    """The states of a history: [start, after move 1, ...] and the moves read."""
    if not isinstance(moves, list):
        raise InputError(f"{where}: expected a list of moves")
    states = [start]
    read = []
    for i, j in enumerate(moves):
        m = read_move(g, j, f"{where}[{i}]")
        states.append(apply_move(g, states[-1], m, f"{where}[{i}]"))
        read.append(m)
    return states, read


# ---- what a state offers ------------------------------------------------------------------

def listing(g: Game, st):
    """Every action instance of ``st``: the legal moves (move, next state), and the refused
    ones as (move, rule, why), in the actions' order.  An action closed by its leading
    requires (which read no argument: the phase, say) is refused by the same rule for every
    instance, which is found once."""
    legal, refused = [], []
    for a in g.actions:
        insts = a.instances(st)
        if not insts:
            continue
        shortcut = None
        if a.hoisted is not None:
            try:
                closed = not a.hoisted(st, [None] * a.frame)
            except EvalError:
                closed = False
            if closed:
                try:
                    a.apply(st, insts[0])
                except Refused as r:
                    shortcut = r
        for params in insts:
            m = Move(a.name, params)
            if shortcut is not None:
                refused.append((m, shortcut.rule, shortcut.message))
                continue
            try:
                st2, _ = a.apply(st, params)
                legal.append((m, st2))
            except Refused as r:
                refused.append((m, r.rule, r.message))
    return legal, refused


def phase_field(g: Game) -> str | None:
    """The state field most actions first test against a constant: the game's phase (or
    stage), found from the rules alone; None when no action tests one."""
    firsts = Counter(a.gates[0][0] for a in g.actions if a.gates)
    if not firsts:
        return None
    return g.p.state[firsts.most_common(1)[0][0]].name


def scores(g: Game, st, winners: bool = False) -> dict | None:
    """Each player's score (and who wins, once the game is over or with ``winners``), where
    the spec defines `score`; None otherwise."""
    if not g.has_def("score") or "Player" not in g.p.types:
        return None
    pt = g.p.types["Player"]
    players = list(finite(pt).values)
    try:
        score = g.expr("score(p)", {"p": pt})[0]
        out = {"score": [score(st, p) for p in players]}
        if g.has_def("winner") and (winners or g.is_terminal(st)):
            win = g.expr("winner(p)", {"p": pt})[0]
            out["winners"] = [p for p in players if win(st, p)]
    except RulebookError as e:
        return {"error": e.headline()}
    return out


def view(g: Game, st, flt: str = "") -> dict:
    """What the page shows of a state: actor, phase, end, scores, every legal move, and the
    refused ones grouped by action and rule (with ``flt``, only the moves whose JSON contains
    it, spaces ignored), each group with its count and its first moves."""
    legal, refused = listing(g, st)
    flt = re.sub(r"\s+", "", flt or "")
    groups: dict = {}
    for m, rule, why in refused:
        key = (m.action, rule)
        grp = groups.get(key)
        if grp is None:
            grp = groups[key] = {"action": m.action, "rule": rule, "why": why, "count": 0,
                                 "matching": 0, "moves": []}
        grp["count"] += 1
        if flt:
            mj = m.to_json(g)
            if flt not in json.dumps(mj, separators=(",", ":")):
                continue
        elif len(grp["moves"]) >= EXAMPLES_SHOWN:
            grp["matching"] += 1
            continue
        else:
            mj = m.to_json(g)
        grp["matching"] += 1
        if len(grp["moves"]) < EXAMPLES_SHOWN:
            grp["moves"].append({"move": mj, "label": m.label(g)})
    pf = phase_field(g)
    chance = {a.name for a in g.actions if a.chance}
    return {"actor": g.actor(st), "terminal": g.is_terminal(st),
            "phase": None if pf is None else
            {"field": pf, "value": to_json(g.p.state[g.field_index[pf]].type,
                                            st[g.field_index[pf]])},
            "scores": scores(g, st),
            "legal": [{"move": m.to_json(g), "label": m.label(g), "chance": m.action in chance}
                      for m, _ in legal],
            "refused": list(groups.values()), "refused_total": len(refused),
            "filter": flt}


# ---- seeded random players ----------------------------------------------------------------

def rng_at(seed: int, k: int) -> random.Random:
    """The random players' generator for a line started after ``k`` moves: ``Random(seed)``
    from the start (so from the initial state the line is the game `rulebook play --seed S
    --trace` prints), a generator of its own for each later position."""
    return random.Random(seed if k == 0 else f"{seed}:{k}")


def random_line(g: Game, st, rng: random.Random, count: int | None):
    """Up to ``count`` moves (None: to the end) drawn as `rulebook play` draws them: chance
    first, weighted; else a uniformly random legal move.  Returns (moves, final state)."""
    chance = [a for a in g.actions if a.chance]
    player = [a for a in g.actions if not a.chance]
    out = []
    while not g.is_terminal(st) and (count is None or len(out) < count):
        if len(out) >= MAX_STEPS:
            raise EvalError(f"no end after {MAX_STEPS} random moves")
        picked = g.pick(st, rng, chance, True) or g.pick(st, rng, player, False)
        if picked is None:
            raise EvalError(f"no legal move in a state that is not terminal (after "
                            f"{len(out)} random moves)")
        m, st = picked
        out.append(m)
    return out, st


# ---- two readings on one state ------------------------------------------------------------

def reading_pair(g: Game, reading: str, a: str, b: str) -> tuple[str, str, str]:
    """``(reading, a, b)`` checked against the game's readings."""
    decl = next((r for r in g.p.readings if r.name == reading), None)
    if decl is None:
        raise InputError(f"reading: {g.name} has no reading {reading!r} (readings: "
                         f"{', '.join(r.name for r in g.p.readings) or 'none'})")
    names = [o for o, _ in decl.options]
    for side, o in (("a", a), ("b", b)):
        if o not in names:
            raise InputError(f"{side}: reading {reading} has no option {o!r} (options: "
                             f"{', '.join(names)})")
    if a == b:
        raise InputError(f"b: compare two different options of {reading} (both are {a!r})")
    return reading, a, b


def compare(opts: Options, reading: str, a: str, b: str, state_obj, where: str = "state"):
    """Every move of one state under two options of a reading: (game under a, game under b,
    the state, rows, same), each row ``{move, label, a, b, differs}`` with ``a``/``b`` either
    ``{"legal": true}`` or ``{"legal": false, "rule", "why"}``; ``differs`` is "legality",
    "outcome" (legal under both, different next states), "rule" (refused by different rules)
    or "" (legal under both, same result).  The moves refused under both by the same rule are
    only counted, in ``same``: (action, rule) -> how many."""
    ga = opts.with_variant(f"{reading}:{a}").load()
    gb = opts.with_variant(f"{reading}:{b}").load()
    if [f.name for f in ga.p.state] != [f.name for f in gb.p.state]:
        raise InputError(f"the readings {a} and {b} of {reading} have different state fields")
    st = read_state(ga, state_obj, where)
    la, ra = listing(ga, st)
    lb, rb = listing(gb, st)
    out_a = {m: ("legal", s2) for m, s2 in la} | {m: ("refused", r, w) for m, r, w in ra}
    out_b = {m: ("legal", s2) for m, s2 in lb} | {m: ("refused", r, w) for m, r, w in rb}
    rows = []
    same: dict = {}
    for m in list(out_a) + [m for m in out_b if m not in out_a]:
        x, y = out_a.get(m), out_b.get(m)
        if x is None or y is None:
            differs = "legality"     # an instance of one reading only (a domain that differs)
        elif x[0] != y[0]:
            differs = "legality"
        elif x[0] == "legal":
            differs = "outcome" if x[1] != y[1] else ""
        elif x[1] != y[1]:
            differs = "rule"
        else:
            same[(m.action, x[1])] = same.get((m.action, x[1]), 0) + 1
            continue
        g = ga if x is not None else gb
        rows.append({"move": m.to_json(g), "label": m.label(g), "a": _side(x), "b": _side(y),
                     "differs": differs})
    return ga, gb, st, rows, same


def _side(x) -> dict:
    if x is None:
        return {"legal": False, "rule": "domain", "why": "not a move of this reading"}
    if x[0] == "legal":
        return {"legal": True}
    return {"legal": False, "rule": x[1], "why": x[2]}


def witness_dir() -> Path:
    return REPO / "docs" / "witnesses"


def stored_witness(game: str, reading: str, a: str, b: str) -> dict:
    """The stored ambiguity witness of ``game`` for options ``a`` and ``b`` of ``reading``
    (docs/witnesses/GAME.json): its game options, state, move and what it says."""
    from ..docs.docpages import load_stored
    check_game_name(game)
    path = witness_dir() / f"{game}.json"
    stored = load_stored(path)
    if stored is None:
        raise InputError(f"witness: no stored witnesses for {game} ({path} is missing; "
                         f"docs/witnesses/ is in a checkout of the project)")
    for w in stored.get("ambiguities", []):
        if w.get("reading") == reading and {w.get("a"), w.get("b")} == {a, b}:
            break
    else:
        have = [f"{w.get('reading')}:{w.get('a')}:{w.get('b')}"
                for w in stored.get("ambiguities", [])]
        raise InputError(f"witness: no stored witness {reading}:{a}:{b} for {game} "
                         f"(stored: {', '.join(have) or 'none'})")
    if not w.get("found") or w.get("state") is None:
        raise InputError(f"witness: {reading}:{a}:{b} of {game} has no witness state "
                         f"({'z3 gave up' if w.get('found') is None else 'the readings agree'})")
    params = dict(w.get("params") or stored.get("params") or {})
    opts = options(game, [], params)
    return {"options": opts, "reading": reading, "a": w["a"], "b": w["b"],
            "state": w["state"], "move": w.get("move"), "disagree_on": w.get("disagree_on"),
            "under_a": w.get("under_a", ""), "under_b": w.get("under_b", ""),
            "question": w.get("question", "")}


def stored_witnesses(game: str) -> list[dict]:
    """The stored witnesses of a game with a state, as (reading, a, b, disagree_on)."""
    from ..docs.docpages import load_stored
    stored = load_stored(witness_dir() / f"{game}.json") or {}
    return [{"reading": w["reading"], "a": w["a"], "b": w["b"],
             "disagree_on": w.get("disagree_on", "")}
            for w in stored.get("ambiguities", []) if w.get("found") and w.get("state")]


# ---- puzzles ------------------------------------------------------------------------------

def puzzle_dir() -> Path:
    return REPO / "examples" / "puzzles"


def puzzle_files() -> list[str]:
    d = puzzle_dir()
    return sorted(p.name for p in d.glob("*.json")) if d.is_dir() else []


def puzzle_text(name: str) -> str:
    if name not in puzzle_files():
        raise InputError(f"file: no puzzle file {name!r} in examples/puzzles/ (files: "
                         f"{', '.join(puzzle_files()) or 'none'})")
    return (puzzle_dir() / name).read_text(encoding="utf-8")


def solve_text(text: str, where: str, backend: str, timeout_ms: int) -> list[dict]:
    """Answer the puzzle (or list of puzzles) of ``text`` as `rulebook solve` does, and for
    each the game options, the start state and the moves of its first solution, replayed."""
    from ..queries.puzzles import BACKENDS, prepare, solve
    if backend not in BACKENDS:
        raise InputError(f"backend: unknown backend {backend!r} (one of {', '.join(BACKENDS)})")
    data = parse_json(text, where)
    many = isinstance(data, list)
    out = []
    for i, obj in enumerate(data if many else [data]):
        at = f"{where}[{i}]" if many else where
        try:
            answer = solve(obj, backend, timeout_ms, at)
            prep = prepare(obj, at)
        except InputError as e:
            raise locate(e, where, text) from None
        start, moves, states = solution_moves(prep, answer)
        out.append({"puzzle": obj, "answer": answer, "game": prep.game,
                    "options": puzzle_options(prep, obj),
                    "start": start, "moves": moves, "states": states})
    return out


def puzzle_options(prep, obj: dict) -> Options:
    """The game options of a prepared puzzle: its variants, and the parameters its inputs set
    (``players``, a board's size) where they differ from the game's."""
    g = prep.game
    variants = tuple(obj.get("variants", []))
    base = load_game(g.name, variants)
    params = {k: v for k, v in g.p.param_values.items() if base.p.param_values.get(k) != v}
    return Options(g.name, variants, tuple(sorted(params.items())))


def solution_moves(prep, answer: dict):
    """The start of the puzzle's first query that shows steps, and its first solution as
    moves (each shown step matched among the legal moves, as `rulebook solve --svg` does)
    with the states they pass through."""
    from ..lang.errors import Disagreement
    from ..queries.puzzleprep import query_actions, query_start, step_json
    game = prep.game
    q = prep.puzzle.queries[0]
    steps = None
    for qq in prep.puzzle.queries:
        for key, kind in qq.answers:
            val = answer.get(key)
            if kind == "steps" and isinstance(val, list) and steps is None:
                q, steps = qq, val
            elif kind == "runs" and isinstance(val, list) and val and steps is None:
                q, steps = qq, val[0]
    st, env = query_start(prep, q)
    states, moves = [st], []
    if q.choose is not None or not steps:
        return st, moves, states
    actions = query_actions(prep, q, st, env)
    for step in steps:
        for m, st2, shows in game.legal(st, actions):
            if step_json(game, m, shows) == step:
                st = st2
                moves.append(m)
                states.append(st)
                break
        else:
            raise Disagreement(f"the step {step} does not replay in the interpreter")
    return states[0], moves, states
