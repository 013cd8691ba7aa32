"""Puzzles: the spec's `puzzle` declarations answered from JSON, by interpreter search or by Z3.

A puzzle object names its ``game`` (and ``variants``, ``puzzle``), then one key per `input` of
the spec's puzzle.  Each `query` of the puzzle yields the answers it declares: ``found`` (a
bool), ``steps`` (the shown items of each move of one best solution) and ``best`` (the optimum).
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

import z3

from . import domains as dz
from . import ir
from .codec import from_json, to_json
from .errors import InputError, RulebookError
from .evaluate import Refused
from .game import Game, Move, load_game
from .irwalk import nodes
from .symbolic import Unknown, check, make_solver, read_moves, unroll
from .types import BagT, IntT

BACKENDS = ("search", "z3")
DEFAULT_BACKEND = "search"
# Unrolling keeps up to this many concrete successor states apart per step before merging
# them into symbolic ones (see `symbolic.unroll`).
EXACT_BUDGET = 256


class Disagreement(RulebookError):
    """The solver's answer did not replay in the interpreter: a bug, reported loudly."""


@dataclass
class Prepared:
    game: Game
    puzzle: ir.Puzzle
    env: list              # the puzzle frame with the inputs filled in
    present: set           # names of the inputs given


def prepare(obj: dict, where: str = "puzzle") -> Prepared:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: a puzzle is a JSON object")
    name = obj.get("game")
    if not isinstance(name, str):
        raise InputError(f"{where}.game: missing or not a string")
    variants = obj.get("variants", [])
    if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
        raise InputError(f"{where}.variants: expected a list of names")
    base = load_game(name, tuple(variants))
    puzzles = base.p.puzzles
    if not puzzles:
        raise InputError(f"{where}.game: {name} declares no puzzle")
    # `ask` is the same key under the name the games' puzzle formats use ("ask": "destinations").
    if "puzzle" in obj and "ask" in obj:
        raise InputError(f"{where}.ask: give either puzzle or ask, not both")
    key = "ask" if "ask" in obj else "puzzle"
    pname = obj.get(key, puzzles[0].name)
    if not isinstance(pname, str):
        raise InputError(f"{where}.{key}: expected a puzzle name")
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
            v = from_json(inp.type, obj[inp.name], f"{where}.{inp.name}") if inp.name in obj \
                else base.p.param_values[inp.name]
            params.append((inp.name, v))
    game = load_game(name, tuple(variants), tuple(params))
    decl = next(p for p in game.p.puzzles if p.name == pname)
    env = [None] * (decl.frame + 1)
    present = set()
    st0 = game.initial()
    for inp in decl.inputs:
        if inp.name in obj:
            env[inp.slot + 1] = from_json(inp.type, obj[inp.name], f"{where}.{inp.name}")
            present.add(inp.name)
        elif inp.default is not None:
            env[inp.slot + 1] = game.concrete.expr(inp.default)(st0, env)
        else:
            raise InputError(f"{where}.{inp.name}: required")
        for c in inp.checks:
            _run_check(game, c, st0, env, f"{where}.{inp.name}")
    for c in decl.checks:
        _run_check(game, c, st0, env, where)
    return Prepared(game, decl, env, present)


def _run_check(game: Game, c: ir.Check, st, env, where: str) -> None:
    if game.concrete.expr(c.expr)(st, env):
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
    import json
    return json.dumps(to_json(t, v))


def solve(obj: dict, backend: str = DEFAULT_BACKEND, timeout_ms: int = 60_000,
          where: str = "puzzle") -> dict:
    prep = prepare(obj, where)
    out: dict = {}
    for q in prep.puzzle.queries:
        if q.when is not None and q.when not in prep.present:
            for key, _ in q.answers:
                out[key] = None
            continue
        res = run_query(prep, q, backend, timeout_ms)
        for key, kind in q.answers:
            out[key] = res[kind]
    return out


def _start(prep: Prepared, q: ir.Query, chosen=None):
    env = list(prep.env)
    if q.choose is not None:
        env[q.choose.slot + 1] = chosen
    st = prep.game.run_stmts(q.setup, 0, prep.game.initial(), env)
    return st, env


def run_query(prep: Prepared, q: ir.Query, backend: str, timeout_ms: int) -> dict:
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r} (one of {', '.join(BACKENDS)})")
    if any(kind in ("all", "count") for _, kind in q.answers):
        # Every solution: the runs of at most `within` moves that reach the goal (a run stops
        # at its first goal state), in the order the backend finds them, sorted for output.
        runs = _search_all(prep, q) if backend == "search" else _z3_all(prep, q, timeout_ms)
        if runs == "unknown":
            return {"found": "unknown", "steps": None, "best": None, "all": "unknown",
                    "count": "unknown"}
        runs = sorted(runs, key=lambda r: json.dumps(r))
        return {"found": bool(runs), "steps": runs[0] if runs else None, "best": None,
                "all": runs, "count": len(runs)}
    if backend == "search":
        return _search_query(prep, q)
    return _z3_query(prep, q, timeout_ms)


def _search_all(prep: Prepared, q: ir.Query) -> list:
    game = prep.game
    goal = game.concrete.expr(q.goal)
    within = game.concrete.expr(q.within)
    actions = set(q.using) if q.using else None
    out = []
    for c in _choices(prep, q):
        st0, env = _start(prep, q, c)

        def walk(st, d, path):
            if goal(st, env):
                out.append(list(path))
                return
            if d == 0:
                return
            for m, st2, shows in game.legal(st, actions):
                path.append(_render(game, m, shows))
                walk(st2, d - 1, path)
                path.pop()
        walk(st0, within(st0, env), [])
    return out


def _z3_all(prep: Prepared, q: ir.Query, timeout_ms: int):
    """Every solution from z3: enumerate models, blocking each run's path of choices; every
    run is replayed in the interpreter before it is counted."""
    game = prep.game
    if q.choose is not None:
        raise InputError("the z3 backend enumerates solutions only for queries without choose")
    st0, env = _start_sym(prep, q, None)
    depth = game.symbolic.expr(q.within)(st0, env)
    if dz.is_sym(depth):
        raise InputError("the z3 backend enumerates solutions only for a fixed `within`")
    u = unroll(game, st0, depth, tuple(q.using) or None, exact_budget=EXACT_BUDGET)
    fgoal = game.symbolic.expr(q.goal)
    plain = dz.is_concrete(tuple(env))
    cgoal = game.concrete.expr(q.goal) if plain else None
    # A run stops at its first goal state: the goal must not hold earlier on the path.
    s = make_solver(timeout_ms)
    s.add(*u.constraints)
    reached = []
    for k, layer in enumerate(u.layers):
        vals = [bool(cgoal(n.state, env)) if cgoal and n.concrete else
                fgoal(n.state, env) for n in layer]
        reached.append(vals)
    for k, layer in enumerate(u.layers[:-1]):
        for n, g in zip(layer, reached[k]):
            # At a goal state the run stops (the `stop` choice is the last one).
            if g is not False:
                s.add(z3.Implies(dz.lift(dz.and_(n.active, g)),
                                 n.choice == len(n.branches)))
    s.add(dz.lift(dz.any_(dz.and_(n.active, g) for n, g in zip(u.layers[-1], reached[-1]))))
    runs = []
    try:
        while check(s):
            model = s.model()
            moves = read_moves(game, u, model)
            steps, _ = replay(prep, q, None, moves)
            runs.append(steps)
            path = []
            ni = 0
            for layer in u.layers[:-1]:
                node = layer[ni]
                i = model.eval(node.choice, model_completion=True).as_long()
                path.append(node.choice == i)
                ni = node.succ[i]
            s.add(z3.Not(z3.And(path)))
    except Unknown:
        return "unknown"
    return runs


# ---- the interpreter backend: exhaustive search with memoisation -------------------------------

def _choices(prep: Prepared, q: ir.Query):
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


def _search_query(prep: Prepared, q: ir.Query) -> dict:
    game = prep.game
    goal = game.concrete.expr(q.goal)
    obj = game.concrete.expr(q.maximize) if q.maximize is not None else None
    within = game.concrete.expr(q.within)
    actions = set(q.using) if q.using else None
    choices = _choices(prep, q)
    # An objective that reads no state (say, the size of the chosen bag) ranks the choices up
    # front: the first feasible one in that order is the optimum.
    static_obj = obj is not None and not _reads_state(q.maximize)
    ranked = []
    for c in choices:
        st, env = _start(prep, q, c)
        ranked.append((obj(st, env) if static_obj else 0, c, st, env))
    if static_obj:
        ranked.sort(key=lambda r: -r[0])
    best = None
    for _, c, st, env in ranked:
        res = _search_one(game, st, env, goal, obj, within(st, env), actions)
        if res is None:
            continue
        if best is None or (obj is not None and res[0] > best[0]):
            best = res
        if obj is None or static_obj:
            break
    if best is None:
        return {"found": False, "steps": None, "best": None}
    return {"found": True, "steps": best[1], "best": best[0] if obj is not None else None}


def _reads_state(e: ir.Expr) -> bool:
    return any(isinstance(n, ir.StateRef) for n in nodes(e))


def _search_one(game: Game, st0, env, goal, obj, depth: int, actions):
    """Best (objective, shown steps) over runs of at most ``depth`` moves ending in a goal."""
    memo: dict = {}

    def best_from(st, d):
        key = (st, d)
        if key in memo:
            return memo[key]
        best = None
        if goal(st, env):
            best = ((obj(st, env) if obj else 0), ())
            if obj is None:
                memo[key] = best
                return best
        if d > 0:
            for m, st2, shows in game.legal(st, actions):
                sub = best_from(st2, d - 1)
                if sub is not None and (best is None or sub[0] > best[0]):
                    best = (sub[0], ((m, shows),) + sub[1])
                    if obj is None:
                        break
        memo[key] = best
        return best

    res = best_from(st0, depth)
    if res is None:
        return None
    return res[0], [_render(game, m, shows) for m, shows in res[1]]


def _render(game: Game, m: Move, shows) -> list:
    """A step as the action's `show` renders it (its name and arguments if it shows nothing)."""
    return shows[0] if shows else m.to_json(game)


# ---- the Z3 backend ------------------------------------------------------------------------

def _z3_query(prep: Prepared, q: ir.Query, timeout_ms: int) -> dict:
    game = prep.game
    cons: list = []
    chosen = None
    if q.choose is not None:
        d = q.choose.domain
        if not isinstance(d, ir.SubbagDomain):
            raise InputError("the z3 backend chooses only sub-bags")
        bag = game.concrete.expr(d.coll)(game.initial(), prep.env)
        xs = []
        for i, n in enumerate(bag):
            if n == 0:
                xs.append(0)
            else:
                v = z3.Int(f"choose{i}")
                cons += [v >= 0, v <= n]
                xs.append(v)
        chosen = tuple(xs)
    st0, env = _start_sym(prep, q, chosen)
    depth_v = game.symbolic.expr(q.within)(st0, env)
    if dz.is_sym(depth_v):
        # The bound depends on the choice: unroll to its largest value.
        depth = q.within.type.hi if isinstance(q.within.type, IntT) else 0
        depth = min(depth, _max_within(prep, q))
    else:
        depth = depth_v
    u = unroll(game, st0, depth, tuple(q.using) or None, exact_budget=EXACT_BUDGET)
    fgoal = game.symbolic.expr(q.goal)
    # Wholly concrete final states are judged by the interpreter, when the inputs are concrete.
    plain = dz.is_concrete(tuple(env))
    cgoal = game.concrete.expr(q.goal) if plain else None
    goal = u.final(lambda st: fgoal(st, env), cgoal and (lambda st: bool(cgoal(st, env))))
    objective = None
    if q.maximize is not None:
        fobj = game.symbolic.expr(q.maximize)
        cobj = game.concrete.expr(q.maximize) if plain else None
        objective = u.final(lambda st: fobj(st, env), cobj and (lambda st: cobj(st, env)))
    s = make_solver(timeout_ms)
    s.add(*cons, *u.constraints)
    if dz.is_sym(depth_v):
        # Runs longer than the bound are excluded: stop after `within` moves.
        for k, layer in enumerate(u.layers[:-1]):
            for node in layer:
                s.add(z3.Implies(k >= depth_v, node.choice == len(node.branches)))
    s.add(dz.lift(goal))
    try:
        if not check(s):
            return {"found": False, "steps": None, "best": None}
        model = s.model()
        best = None
        if objective is not None:
            best = model.eval(dz.lift(objective), model_completion=True).as_long()
            while True:
                s.push()
                s.add(dz.lift(objective) > best)
                if not check(s):
                    s.pop()
                    break
                model = s.model()
                best = model.eval(dz.lift(objective), model_completion=True).as_long()
                s.pop()
    except Unknown:
        return {"found": "unknown", "steps": None, "best": "unknown"}
    moves = read_moves(game, u, model)
    picked = chosen and tuple(dz.concretize(BagT(q.choose.domain.elem, 99), chosen, model))
    steps, value = replay(prep, q, picked, moves)
    if objective is not None and value != best:
        raise Disagreement(f"z3 found {best}, the interpreter replays {value}")
    return {"found": True, "steps": steps, "best": best}


def _max_within(prep: Prepared, q: ir.Query) -> int:
    return max(prep.game.concrete.expr(q.within)(*_start(prep, q, c)) for c in _choices(prep, q))


def _start_sym(prep: Prepared, q: ir.Query, chosen):
    env = list(prep.env)
    if q.choose is not None:
        env[q.choose.slot + 1] = chosen
    st = prep.game.initial()
    if q.setup:
        from .evaluate import SymCtx
        paths = prep.game.symbolic.stmts(q.setup)(st, SymCtx(True, env))
        if len(paths) != 1:
            raise InputError("a query's `from` block may not branch on the chosen value")
        st, ctx = paths[0]
        env = ctx.env
    return st, env


def replay(prep: Prepared, q: ir.Query, chosen, moves: list[Move]):
    """Replay a solver's moves in the interpreter; return (shown steps, objective)."""
    game = prep.game
    st, env = _start(prep, q, chosen)
    steps = []
    for m in moves:
        try:
            st, shows = game.apply(st, m)
        except Refused as r:
            raise Disagreement(f"the solver's move {m.label(game)} is refused by the "
                               f"interpreter: {r.rule}") from None
        steps.append(_render(game, m, shows))
    if not game.concrete.expr(q.goal)(st, env):
        raise Disagreement("the solver's moves do not reach the goal in the interpreter")
    value = game.concrete.expr(q.maximize)(st, env) if q.maximize is not None else None
    return steps, value
