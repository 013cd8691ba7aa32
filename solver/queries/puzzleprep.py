"""A puzzle prepared for its backends: the JSON read and checked against the spec's `puzzle`
declaration, where each query starts, and the interpreter's replay of a solver's run, which
every backend's answer goes through before it is reported."""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

from ..lang import ir
from ..lang.codec import from_json, to_json
from ..lang.errors import Disagreement, InputError, SpecError, VariantError
from ..lang.sources import find_spec, texts_digest
from ..engine.evaluate import Refused
from ..engine.game import Game, Move, load_game
from ..engine.pins import allows


@dataclass
class Prepared:
    """A puzzle read against its game, its inputs filled in: what every backend starts from."""

    game: Game
    puzzle: ir.Puzzle
    env: list              # the puzzle frame with the inputs filled in
    present: set           # names of the inputs given


def prepare(obj: dict, where: str = "puzzle") -> Prepared:
    """The puzzle object ``obj`` read against its game's `puzzle` declaration, every input
    checked (an error names the field, under ``where``)."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: a puzzle is a JSON object")
    name = obj.get("game")
    if not isinstance(name, str):
        raise InputError(f"{where}.game: missing or not a string")
    variants = obj.get("variants", [])
    if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
        raise InputError(f"{where}.variants: expected a list of names")
    # The files are read and digested once for both loads below (the game, then the game
    # under the puzzle's parameters): `load_game` would read them on each.
    digest = texts_digest(name, tuple(variants), paths=True)
    try:
        base = _load(name, tuple(variants), (), where, variants, digest)
    except SpecError:
        # No such game: the error points at "game".  (Looked up only when the load fails:
        # a game already compiled is a cache hit, and the look-up reads the spec's file.)
        try:
            find_spec(name)
        except SpecError as e:
            raise InputError(f"{where}.game: {e.message}") from None
        raise
    puzzles = base.p.puzzles
    if not puzzles:
        raise InputError(f"{where}.game: {name} declares no puzzle")
    # `ask` is the same key under the name the games' puzzle formats use ("ask": "destinations").
    if "puzzle" in obj and "ask" in obj:
        raise InputError(f"{where}.ask: give either puzzle or ask, not both")
    key = "ask" if "ask" in obj else "puzzle"
    if key not in obj and len(puzzles) > 1:
        raise InputError(f"{where}: say which puzzle with \"ask\" ({name} has "
                         f"{', '.join(p.name.replace('_', '-') for p in puzzles)})")
    pname = obj.get(key, puzzles[0].name)
    if not isinstance(pname, str):
        raise InputError(f"{where}.{key}: expected a puzzle name")
    # Puzzle names are rules-language names: `block-squares` asks for `block_squares`.
    pname = pname if any(p.name == pname for p in puzzles) else pname.replace("-", "_")
    decl = next((p for p in puzzles if p.name == pname), None)
    if decl is None:
        raise InputError(f"{where}.{key}: {name} has no puzzle {pname!r} "
                         f"(puzzles: {', '.join(p.name for p in puzzles)})")
    known = {i.name for i in decl.inputs} | {"game", "variants", "puzzle", "ask"}
    for k in obj:
        if k not in known:
            raise InputError(f"{where}.{k}: not an input of puzzle {decl.name} (inputs: "
                             f"{', '.join(i.name for i in decl.inputs)})")
    # Parameters first: they fix the types of everything else.
    params = []
    for inp in decl.inputs:
        if inp.is_param:
            if inp.name in obj:
                v = from_json(inp.type, obj[inp.name], f"{where}.{inp.name}")
            elif isinstance(inp.default, ir.Const):
                # The puzzle's own default for the parameter (`input players: 1..5 = 1`).
                v = inp.default.value
            else:
                v = base.p.param_values[inp.name]
            params.append((inp.name, v))
    game = _load(name, tuple(variants), tuple(params), where, variants, digest)
    decl = next(p for p in game.p.puzzles if p.name == pname)
    env = [None] * (decl.frame + 1)
    present = set()
    st0 = game.initial()
    for inp in decl.inputs:
        if inp.name in obj:
            env[inp.slot + 1] = from_json(inp.type, obj[inp.name], f"{where}.{inp.name}")
            present.add(inp.name)
        elif inp.default is not None:
            env[inp.slot + 1] = game.compiled(inp.default)(st0, env)
        else:
            raise InputError(f"{where}.{inp.name}: required")
        for c in inp.checks:
            _run_check(game, c, st0, env, f"{where}.{inp.name}")
    for c in decl.checks:
        _run_check(game, c, st0, env, where)
    return Prepared(game, decl, env, present)


def _load(name: str, variants: tuple, params: tuple, where: str, written: list,
          digest: str) -> Game:
    """`load_game`, an error about one of the puzzle's variants pointed at its entry in
    "variants" (the last entry of that reading or expansion: the one that conflicts)."""
    try:
        return load_game(name, variants, params, digest)
    except VariantError as e:
        at = [i for i, v in enumerate(written)
              if v == e.variant or v.partition(":")[0].strip() == e.variant]
        if not at:
            raise
        raise InputError(f"{where}.variants[{at[-1]}]: {e.message}") from None


def _run_check(game: Game, c: ir.Check, st, env, where: str) -> None:
    if game.compiled(c.expr)(st, env):
        return
    detail = ""
    e = c.expr
    if isinstance(e, ir.Quant) and e.kind == "forall":
        # Name the first value the property fails for.
        fd = game.concrete.domain(e.domain)
        body = game.concrete.expr(e.body)
        for _, v in fd(st, env):
            env[e.slot + 1] = v
            if not body(st, env):
                detail = f" (for {to_json_text(e.domain.elem, v)})"
                break
    raise InputError(f"{where}: {c.message}{detail}")


def to_json_text(t, v) -> str:
    """A value of type ``t`` as JSON text."""
    return json.dumps(to_json(t, v))


def query_start(prep: Prepared, q: ir.Query, chosen=None):
    """The state and frame the query starts from (its `from` block run), for the choice
    ``chosen`` of its `choose`."""
    # Remembered per query and choice: every z3 solution is replayed from the same start, and
    # a `from` block can be costly (a table over a large space, computed from the input).
    cache = prep.__dict__.setdefault("_starts", {})
    try:
        key = (id(q), chosen)
        hit = cache.get(key)
    except TypeError:   # an unhashable choice
        key, hit = None, None
    if hit is not None and hit[0] is q:
        return hit[1], list(hit[2])
    env = list(prep.env)
    if q.choose is not None:
        env[q.choose.slot + 1] = chosen
    st = prep.game.run_stmts(q.setup, 0, prep.game.initial(), env)
    if key is not None:
        cache[key] = (q, st, list(env))
    return st, env


def query_actions(prep: Prepared, q: ir.Query, st, env, symbolic: bool = False):
    """The query's `using` for `Game.legal`, `unroll` and `explore`: None (every action), or
    each action used with the values its arguments must equal (None: any), read on the start
    ``st``."""
    if not q.using:
        return None
    pins = {name: tuple(None if e is None else prep.game.compiled(e, symbolic)(st, env)
                        for e in es) for name, es in q.pins}
    return {name: pins.get(name) for name in q.using}


def query_choices(prep: Prepared, q: ir.Query):
    """Every value of the query's `choose` (a sub-bag, or a value of a finite domain); [None]
    when it chooses nothing."""
    if q.choose is None:
        return [None]
    d = q.choose.domain
    if isinstance(d, ir.SubbagDomain):
        bag = prep.game.concrete.expr(d.coll)(prep.game.initial(), prep.env)
        ranges = [range(n + 1) for n in bag]
        support = [i for i, n in enumerate(bag) if n]
        out = []
        for combo in itertools.product(*(ranges[i] for i in support)):
            b = [0] * len(bag)
            for i, n in zip(support, combo):
                b[i] = n
            out.append(tuple(b))
        return out
    fd = prep.game.concrete.domain(d)
    return [v for _, v in fd(prep.game.initial(), prep.env)]


def step_json(game: Game, m: Move, shows) -> list:
    """A step as the action's `show` renders it (its name and arguments if it shows nothing)."""
    return shows[0] if shows else m.to_json(game)


def replay(prep: Prepared, q: ir.Query, chosen, moves: list[Move], expect=None):
    """Replay a solver's moves in the interpreter; return (shown steps, objective).  With
    ``expect`` (the objective the solver found), a different objective is a disagreement."""
    game = prep.game
    st, env = query_start(prep, q, chosen)
    actions = query_actions(prep, q, st, env)
    steps = []
    for m in moves:
        if not allows(actions, m):
            raise Disagreement(f"the solver's move {m.label(game)} is not one the query's "
                               f"`using` allows")
        try:
            st, shows = game.apply(st, m)
        except Refused as r:
            raise Disagreement(f"the solver's move {m.label(game)} is refused by the "
                               f"interpreter: {r.rule}") from None
        steps.append(step_json(game, m, shows))
    if not game.compiled(q.goal)(st, env):
        raise Disagreement("the solver's moves do not reach the goal in the interpreter")
    value = game.compiled(q.maximize)(st, env) if q.maximize is not None else None
    if expect is not None and value != expect:
        raise Disagreement(f"the solver found {expect}, the interpreter replays {value}")
    return steps, value
