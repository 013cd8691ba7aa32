"""Puzzles: the spec's `puzzle` declarations answered from JSON, by interpreter search or by Z3.

A puzzle object names its ``game`` (and ``variants``, ``puzzle``), then one key per `input` of
the spec's puzzle.  Each `query` of the puzzle yields the answers it declares: ``found`` (a
bool), ``steps`` (the shown items of each move of one best solution) and ``best`` (the optimum).
"""
from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass

import z3

from ..engine import domains as dz
from ..lang import ir
from ..lang.codec import from_json, to_json
from ..lang.errors import Disagreement, EvalError, InputError, RulebookError
from ..engine.evaluate import Refused
from ..engine.game import Game, Move, allows, load_game
from ..lang.irwalk import nodes
from ..engine.symbolic import (Unknown, check, encode_runs, explore, make_solver, read_moves, read_run,
                       unroll)
from ..lang.types import BagT, IntT

BACKENDS = ("search", "z3")
DEFAULT_BACKEND = "search"
# Unrolling keeps up to this many concrete successor states apart per step before merging
# them into symbolic ones (see `symbolic.unroll`).
EXACT_BUDGET = 256
# From a wholly concrete start, the states within the bound are listed one by one up to this
# many (see `symbolic.explore`); past it the layered unrolling above takes over.  Listing is
# cheap (a few thousand states take a second or less in the interpreter) and z3 then only
# decides which listed states a run reaches, while the unrolling's merged symbolic states can
# cost z3 minutes: three golden and bench puzzles of 295, 564 and 2,104 states went from
# minutes (or "unknown") unrolled to under 3 s listed (README).  A larger space is unrolled.
EXPLICIT_BUDGET = 4096


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
            env[inp.slot + 1] = game.compiled(inp.default)(st0, env)
        else:
            raise InputError(f"{where}.{inp.name}: required")
        for c in inp.checks:
            _run_check(game, c, st0, env, f"{where}.{inp.name}")
    for c in decl.checks:
        _run_check(game, c, st0, env, where)
    return Prepared(game, decl, env, present)


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
    import json
    return json.dumps(to_json(t, v))


def solve(obj: dict, backend: str = DEFAULT_BACKEND, timeout_ms: int = 60_000,
          where: str = "puzzle", progress=None) -> dict:
    """The puzzle's answers.  ``progress`` (a function of one line of text), if given, hears
    how a long search goes: each better run found, and every few seconds the states met."""
    prep = prepare(obj, where)
    out: dict = {}
    for q in prep.puzzle.queries:
        if q.when is not None and q.when not in prep.present:
            for key, _ in q.answers:
                out[key] = None
            continue
        res = run_query(prep, q, backend, timeout_ms, progress)
        for key, kind in q.answers:
            out[key] = res[kind]
        if res.get("incumbent") is not None:
            # Out of time before the optimum was proved: the best run found so far (replayed
            # in the interpreter) and what the optimum is known to be at most, under the
            # query's own answer names (two queries may each run out of time).
            value, steps, at_most = res["incumbent"]
            found = {key: (value if kind == "best" else steps)
                     for key, kind in q.answers if kind in ("best", "steps")}
            out.setdefault("best_found", {}).update(found)
            out.setdefault("at_most", {}).update(
                {key: at_most for key, kind in q.answers if kind == "best"})
    return out


def _start(prep: Prepared, q: ir.Query, chosen=None):
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


LISTING = ("legal", "illegal")


def run_query(prep: Prepared, q: ir.Query, backend: str, timeout_ms: int,
              progress=None) -> dict:
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r} (one of {', '.join(BACKENDS)})")
    if any(kind == "all" for _, kind in q.answers):
        return _all_query(prep, q, backend, timeout_ms)
    if any(kind in ("runs", "count") for _, kind in q.answers):
        # Every solution: the runs of at most `within` moves that reach the goal (a run stops
        # at its first goal state), sorted for output.
        runs = _search_runs(prep, q) if backend == "search" else _z3_runs(prep, q, timeout_ms)
        if runs == "unknown":
            return {"found": "unknown", "steps": None, "best": None, "runs": "unknown",
                    "count": "unknown"}
        runs = sorted(runs, key=lambda r: json.dumps(r))
        return {"found": bool(runs), "steps": runs[0] if runs else None, "best": None,
                "runs": runs, "count": len(runs)}
    kinds = {k for _, k in q.answers}
    res: dict = {}
    if kinds & set(LISTING):
        res.update(_listing(prep, q, backend, timeout_ms))
    if not kinds or kinds - set(LISTING):
        if backend == "search":
            res.update(_search_query(prep, q, _clock() + timeout_ms / 1000, progress))
        else:
            res.update(_z3_query(prep, q, timeout_ms))
    return res


def _actions(prep: Prepared, q: ir.Query, st, env, symbolic: bool = False):
    """The query's `using` for `Game.legal`, `unroll` and `explore`: None (every action), or
    each action used with the values its arguments must equal (None: any), read on the start
    ``st``."""
    if not q.using:
        return None
    pins = {name: tuple(None if e is None else prep.game.compiled(e, symbolic)(st, env)
                        for e in es) for name, es in q.pins}
    return {name: pins.get(name) for name in q.using}


def _search_runs(prep: Prepared, q: ir.Query) -> list:
    game = prep.game
    goal = game.concrete.expr(q.goal)
    within = game.concrete.expr(q.within)
    out = []
    for c in _choices(prep, q):
        st0, env = _start(prep, q, c)
        actions = _actions(prep, q, st0, env)

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


def _z3_runs(prep: Prepared, q: ir.Query, timeout_ms: int):
    """Every solution run from z3: enumerate models, blocking each run's path of choices; every
    run is replayed in the interpreter before it is counted.  The unrolling and every check
    share ``timeout_ms``: past it the answer is "unknown", never a partial list."""
    game = prep.game
    deadline = time.monotonic() + timeout_ms / 1000
    if q.choose is not None:
        raise InputError("the z3 backend enumerates solutions only for queries without choose")
    st0, env = _start_sym(prep, q, None)
    depth = game.symbolic.expr(q.within)(st0, env)
    if dz.is_sym(depth):
        raise InputError("the z3 backend enumerates solutions only for a fixed `within`")
    try:
        u = unroll(game, st0, depth, _actions(prep, q, st0, env, True),
                   exact_budget=EXACT_BUDGET, deadline=deadline)
    except Unknown:
        return "unknown"
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
        while check(s, deadline=deadline):
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


def _listing(prep: Prepared, q: ir.Query, backend: str, timeout_ms: int) -> dict:
    """Every move of the query's actions from its `from` state: legal, or the rule refusing it."""
    from .listing import search_listing, z3_listing
    st, env = _start(prep, q)
    actions = _actions(prep, q, st, env)
    if backend == "search":
        return search_listing(prep.game, st, actions)
    return z3_listing(prep.game, st, actions, timeout_ms)


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


def _search_query(prep: Prepared, q: ir.Query, deadline: float | None = None,
                  progress=None) -> dict:
    """The search backend's answer.  A query with a `bound:` stops at ``deadline``: its answer
    is then "unknown", with the best run found so far as the incumbent."""
    game = prep.game
    goal = game.compiled(q.goal)
    obj = game.compiled(q.maximize) if q.maximize is not None else None
    within = game.compiled(q.within)
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
    bound = game.compiled(q.bound) if q.bound is not None and obj is not None else None
    best = None
    for k, (_, c, st, env) in enumerate(ranked):
        if bound is not None and not static_obj:
            try:
                res = _search_bb(game, st, env, goal, obj, bound, within(st, env),
                                 _actions(prep, q, st, env), deadline, progress)
            except _OutOfTime as o:
                if o.best is not None and (best is None or o.best[0] > best[0]):
                    best = o.best
                if best is None:
                    return {"found": "unknown", "steps": None, "best": "unknown"}
                # The choices not yet searched may do better, up to their bounds.
                at_most = max([best[0], o.at_most] + [bound(st2, env2)
                                                      for _, _, st2, env2 in ranked[k + 1:]])
                return {"found": True, "steps": None, "best": "unknown",
                        "incumbent": (best[0], best[1], at_most)}
        else:
            res = _search_one(game, st, env, goal, obj, within(st, env),
                              _actions(prep, q, st, env))
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


_clock = time.monotonic           # the search's clock (a test may make time pass faster)


class _OutOfTime(Exception):
    """Branch and bound ran out of time: the best (objective, shown steps) found so far, or
    None, and an upper bound of the optimum."""

    def __init__(self, best, at_most):
        super().__init__("out of time")
        self.best, self.at_most = best, at_most


# Seconds between two progress reports of a long branch and bound.
PROGRESS_EVERY = 5.0


def _search_bb(game: Game, st0, env, goal, obj, bound, depth: int, actions,
               deadline: float | None = None, progress=None):
    """Branch and bound, for a query that declares `bound:` (an upper bound of the objective
    over every run from a state): depth first, keeping the best goal state met so far and
    skipping a state whose bound cannot beat it, or that was already explored with at least as
    many moves left.  The bound is checked against the objective wherever both are known.

    Past ``deadline`` it raises `_OutOfTime` with the best run so far and an upper bound of
    the optimum: the bound of the first move being explored (the first moves are tried in
    decreasing order of bound, and every one before it is finished).  ``progress`` hears of
    each better run and, every PROGRESS_EVERY seconds, of the states met so far."""
    best: list = [None, None]
    frontier: list = []                       # the bound of the first move being explored
    explored: dict = {}
    path: list = []
    bounds: dict = {}
    start = _clock() if progress is not None else 0.0
    next_report = [start + PROGRESS_EVERY]

    def at_most():
        return frontier[0] if frontier else bound_of(st0)

    def bound_of(st):
        # Many move orders reach one state: its bound is computed once.
        b = bounds.get(st)
        if b is None:
            b = bounds[st] = bound(st, env)
        return b

    def visit(st, d, b, value=None):
        # ``value``: st's objective when the caller knows it (st is then a goal state).
        if deadline is not None or progress is not None:
            now = _clock()
            if deadline is not None and now > deadline:
                so_far = None if best[1] is None else \
                    (best[0], [_render(game, m, shows) for m, shows in best[1]])
                raise _OutOfTime(so_far, at_most())
            if progress is not None and now >= next_report[0]:
                next_report[0] = now + PROGRESS_EVERY
                progress(f"{len(explored)} states, {now - start:.0f} s: best {best[0]} so far, "
                         f"at most {at_most()}")
        if value is not None or goal(st, env):
            v = obj(st, env) if value is None else value
            if b < v:
                raise EvalError(f"the query's bound ({b}) is below its objective ({v}) in a "
                                f"state reached: the bound is wrong")
            if best[0] is None or v > best[0]:
                best[0], best[1] = v, list(path)
                if progress is not None:
                    progress(f"found {v} ({len(explored)} states, {_clock() - start:.1f} s)")
        if d == 0 or explored.get(st, -1) >= d:
            return
        explored[st] = d
        # The most promising moves first, so that a good plan is found early and prunes more.
        # A successor already explored with as many moves left adds nothing (its goal value
        # was met then): it is skipped before its bound is computed.  A successor with no
        # move left is worth its objective exactly (or nothing, off the goal): that is what
        # ranks it, and its bound (costlier, and no tighter) is not computed.
        rank = bound_of if d > 1 else (lambda st2: obj(st2, env) if goal(st2, env) else None)
        kids = sorted(((r, i, m, st2, shows)
                       for i, (m, st2, shows) in enumerate(game.legal(st, actions))
                       if explored.get(st2, -1) < d - 1
                       and (r := rank(st2)) is not None),
                      key=lambda k: (-k[0], k[1]))
        for r, _, m, st2, shows in kids:
            # What st's bound allows covers every run through st2 as well.
            cb = min(r, b)
            if best[0] is not None and cb <= best[0]:
                break
            if d == depth:
                frontier[:] = [cb]
            path.append((m, shows))
            visit(st2, d - 1, cb, r if d == 1 else None)
            path.pop()

    visit(st0, depth, bound_of(st0))
    if best[0] is None:
        return None
    return best[0], [_render(game, m, shows) for m, shows in best[1]]


def _render(game: Game, m: Move, shows) -> list:
    """A step as the action's `show` renders it (its name and arguments if it shows nothing)."""
    return shows[0] if shows else m.to_json(game)


# ---- the Z3 backend ------------------------------------------------------------------------

def _z3_query(prep: Prepared, q: ir.Query, timeout_ms: int) -> dict:
    """The query on the z3 backend, within ``timeout_ms`` in all: the unrolling and every
    check share one deadline."""
    game = prep.game
    deadline = time.monotonic() + timeout_ms / 1000
    if q.choose is None:
        # Nothing chosen: the inputs (from JSON) and so the start are concrete.
        st0, env = _start(prep, q)
        res = _z3_explicit(prep, q, st0, env, game.compiled(q.within)(st0, env), timeout_ms,
                           deadline)
        if res is not None:
            return res
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
    depth_v = game.compiled(q.within, True)(st0, env)
    if dz.is_sym(depth_v):
        # The bound depends on the choice: unroll to its largest value.
        depth = q.within.type.hi if isinstance(q.within.type, IntT) else 0
        depth = min(depth, _max_within(prep, q))
    else:
        depth = depth_v
    plain = dz.is_concrete(tuple(env))
    try:
        u = unroll(game, st0, depth, _actions(prep, q, st0, env, True), exact_budget=EXACT_BUDGET,
                   deadline=deadline)
    except Unknown:
        return {"found": "unknown", "steps": None, "best": "unknown"}
    fgoal = game.compiled(q.goal, True)
    # Wholly concrete final states are judged by the interpreter, when the inputs are concrete.
    cgoal = game.compiled(q.goal) if plain else None
    goal = u.final(lambda st: fgoal(st, env), cgoal and (lambda st: bool(cgoal(st, env))))
    objective = None
    if q.maximize is not None:
        fobj = game.compiled(q.maximize, True)
        cobj = game.compiled(q.maximize) if plain else None
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
        if not check(s, deadline=deadline):
            return {"found": False, "steps": None, "best": None}
        model = s.model()
        best = None
        if objective is not None:
            best = model.eval(dz.lift(objective), model_completion=True).as_long()
            while True:
                s.push()
                s.add(dz.lift(objective) > best)
                try:
                    better = check(s, deadline=deadline)
                except Unknown:
                    # Out of time with a run in hand: it is the incumbent, replayed in the
                    # interpreter; the optimum is not known to be lower than any value.
                    steps = _replay_model(prep, q, u, model, chosen, best)
                    return {"found": True, "steps": None, "best": "unknown",
                            "incumbent": (best, steps, None)}
                if not better:
                    s.pop()
                    break
                model = s.model()
                best = model.eval(dz.lift(objective), model_completion=True).as_long()
                s.pop()
    except Unknown:
        return {"found": "unknown", "steps": None, "best": "unknown"}
    steps = _replay_model(prep, q, u, model, chosen, best)
    return {"found": True, "steps": steps, "best": best}


def _replay_model(prep: Prepared, q: ir.Query, u, model, chosen, best) -> list:
    """The steps of the run a z3 model of an unrolling describes, replayed in the interpreter,
    which must find the objective z3 found (``best``; None when nothing is maximised)."""
    moves = read_moves(prep.game, u, model)
    picked = chosen and tuple(dz.concretize(BagT(q.choose.domain.elem, 99), chosen, model))
    return replay(prep, q, picked, moves, best)[0]


def _z3_explicit(prep: Prepared, q: ir.Query, st0, env, depth: int, timeout_ms: int,
                 deadline: float | None = None):
    """The query from a wholly concrete start: the interpreter lists the states within the
    bound (`symbolic.explore`), z3 finds which goal states a run reaches (`encode_runs`) and
    maximises the objective over them, raising the bar with one assumption literal per value
    (one incremental solver, no push/pop).  None when the states exceed the budget (the layered
    unrolling takes over)."""
    game = prep.game
    try:
        ex = explore(game, st0, depth, _actions(prep, q, st0, env), EXPLICIT_BUDGET, deadline)
    except Unknown:
        return {"found": "unknown", "steps": None, "best": "unknown"}
    if ex is None:
        return None
    goal = game.compiled(q.goal)
    ends = [n for n, st in enumerate(ex.states) if goal(st, env)]
    lines = encode_runs(ex, "r")
    lines.append(f"(assert {_or_text([f'r{n}' for n in ends])})")
    obj = game.compiled(q.maximize) if q.maximize is not None else None
    value = {n: obj(ex.states[n], env) if obj else 0 for n in ends}
    bars: list = []
    # bar{k}: a run reaches a goal state whose objective is at least v, the k-th lowest value
    # (the lowest needs no literal: any goal state reaches it).
    for k, v in enumerate(sorted(set(value.values()))[1:], 1):
        lines.append(f"(declare-const bar{k} Bool)")
        lines.append(f"(assert (= bar{k} {_or_text([f'r{n}' for n in ends if value[n] >= v])}))")
        bars.append((v, z3.Bool(f"bar{k}")))
    s = make_solver(timeout_ms, finite=True)
    s.from_string("\n".join(lines))

    def best_end():
        """The reached goal state of highest objective in the model."""
        model = s.model()
        reached = [n for n in ends
                   if z3.is_true(model.eval(z3.Bool(f"r{n}"), model_completion=True))]
        if not reached:
            raise Disagreement("z3's model reaches no goal state")
        return model, max(reached, key=lambda n: value[n])

    def replayed(model, end):
        try:
            moves = read_run(ex, model, "r", end)
        except ValueError as e:
            raise Disagreement(f"z3's model is not a run: {e}") from None
        best = value[end] if obj else None
        return replay(prep, q, None, moves, best)[0], best

    try:
        if not check(s, deadline=deadline):
            return {"found": False, "steps": None, "best": None}
        model, end = best_end()
    except Unknown:
        return {"found": "unknown", "steps": None, "best": "unknown"}
    while True:
        bar = next((lit for v, lit in bars if v > value[end]), None)
        try:
            if bar is None or not check(s, bar, deadline=deadline):
                break
        except Unknown:
            # Out of time with a run in hand: it is the incumbent (replayed in the
            # interpreter); the optimum is at most the best goal state listed.
            steps, best = replayed(model, end)
            return {"found": True, "steps": None, "best": "unknown",
                    "incumbent": (best, steps, max(value.values()))}
        model, end = best_end()
    steps, best = replayed(model, end)
    return {"found": True, "steps": steps, "best": best}


def _or_text(lits: list[str]) -> str:
    if not lits:
        return "false"
    return lits[0] if len(lits) == 1 else f"(or {' '.join(lits)})"


def _max_within(prep: Prepared, q: ir.Query) -> int:
    return max(prep.game.compiled(q.within)(*_start(prep, q, c)) for c in _choices(prep, q))


def _start_sym(prep: Prepared, q: ir.Query, chosen):
    env = list(prep.env)
    if q.choose is not None:
        env[q.choose.slot + 1] = chosen
    st = prep.game.initial()
    if q.setup:
        from ..engine.evaluate import SymCtx
        paths = prep.game.symbolic.stmts(q.setup)(st, SymCtx(True, env))
        if len(paths) != 1:
            raise InputError("a query's `from` block may not branch on the chosen value")
        st, ctx = paths[0]
        env = ctx.env
    return st, env


def replay(prep: Prepared, q: ir.Query, chosen, moves: list[Move], expect=None):
    """Replay a solver's moves in the interpreter; return (shown steps, objective).  With
    ``expect`` (the objective the solver found), a different objective is a disagreement."""
    game = prep.game
    st, env = _start(prep, q, chosen)
    actions = _actions(prep, q, st, env)
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
        steps.append(_render(game, m, shows))
    if not game.compiled(q.goal)(st, env):
        raise Disagreement("the solver's moves do not reach the goal in the interpreter")
    value = game.compiled(q.maximize)(st, env) if q.maximize is not None else None
    if expect is not None and value != expect:
        raise Disagreement(f"the solver found {expect}, the interpreter replays {value}")
    return steps, value


# ---- `answer x = all`: every choice for which the goal is reachable ----------------------------

def _all_query(prep: Prepared, q: ir.Query, backend: str, timeout_ms: int) -> dict:
    """The sorted JSON of every value of the query's `choose` for which a solution exists."""
    if q.choose is None or not isinstance(q.choose.domain, ir.TypeDomain):
        raise InputError("`answer ... = all` needs a `choose x in T` over a finite type")
    et = q.choose.domain.elem
    if backend == "search":
        game = prep.game
        goal = game.concrete.expr(q.goal)
        within = game.concrete.expr(q.within)
        found = []
        choices = _choices(prep, q)
        pins = tuple(e for _, es in q.pins for e in es if e is not None)
        if _reads_slot(q.setup, q.choose.slot) or _reads_slot(q.within, q.choose.slot) \
                or any(_reads_slot(e, q.choose.slot) for e in pins):
            for c in choices:
                st, env = _start(prep, q, c)
                if _search_one(game, st, env, goal, None, within(st, env),
                               _actions(prep, q, st, env)) is not None:
                    found.append(c)
        else:
            # The start does not depend on the choice: explore the runs once, then ask the
            # goal of every state reached for each choice.
            st, env = _start(prep, q, choices[0])
            reached = _reachable(game, st, within(st, env), _actions(prep, q, st, env))
            s1 = q.choose.slot + 1
            for c in choices:
                env[s1] = c
                if any(goal(x, env) for x in reached):
                    found.append(c)
    elif backend == "z3":
        found = _z3_all(prep, q, et, timeout_ms)
        if found is None:
            return {"found": "unknown", "steps": None, "best": None, "all": "unknown"}
    else:
        raise InputError(f"unknown backend {backend!r} (one of {', '.join(BACKENDS)})")
    out = sorted(to_json(et, c) for c in found)
    return {"found": bool(found), "steps": None, "best": None, "all": out}


def _reads_slot(node, slot: int) -> bool:
    return any(isinstance(n, ir.Local) and n.slot == slot for n in nodes(node))


def _reachable(game: Game, st0, depth: int, actions) -> list:
    """Every state reachable in at most ``depth`` moves (the start included), each once."""
    seen = {st0}
    layer = [st0]
    for _ in range(depth):
        nxt = []
        for st in layer:
            for _, st2, _ in game.legal(st, actions):
                if st2 not in seen:
                    seen.add(st2)
                    nxt.append(st2)
        layer = nxt
    return list(seen)


def _z3_all(prep: Prepared, q: ir.Query, et, timeout_ms: int):
    """Enumerate the feasible choices with z3, blocking each one found; every one is replayed
    in the interpreter before it is reported.  The unrolling and every check share
    ``timeout_ms``: past it the answer is None ("unknown"), never a partial list."""
    game = prep.game
    deadline = time.monotonic() + timeout_ms / 1000
    fresh = dz.Fresh("choose_")
    chosen = fresh.value(et, q.choose.name)
    st0, env = _start_sym(prep, q, chosen)
    depth = game.concrete.expr(q.within)(*_start(prep, q, _choices(prep, q)[0]))
    try:
        u = unroll(game, st0, depth, _actions(prep, q, st0, env, True),
                   exact_budget=EXACT_BUDGET, deadline=deadline)
    except Unknown:
        return None
    fgoal = game.symbolic.expr(q.goal)
    goal = u.final(lambda st: fgoal(st, env), None)
    s = make_solver(timeout_ms)
    s.add(*fresh.constraints, *u.constraints, dz.lift(goal))
    found = []
    try:
        while check(s, deadline=deadline):
            model = s.model()
            c = dz.concretize(et, chosen, model)
            moves = read_moves(game, u, model)
            replay(prep, q, c, moves)   # raises Disagreement if the interpreter refuses
            found.append(c)
            s.add(dz.not_(dz.lift(dz.eq(et, chosen, c))))
    except Unknown:
        return None
    return found


# ---- pictures: the state a solution reaches --------------------------------------------------

def solution_state(prep: Prepared, q: ir.Query, answer: dict):
    """The state after the first solution's steps (replayed by matching each shown step among
    the legal moves), the points (``[x, y, z]`` lists) the last step shows, and the number of
    steps replayed.  The start state when the query has a choice or no solution."""
    game = prep.game
    steps = None
    for key, kind in q.answers:
        val = answer.get(key)
        if kind == "steps" and isinstance(val, list):
            steps = val
        elif kind == "runs" and isinstance(val, list) and val:
            steps = val[0]
    if q.choose is not None or not steps:
        return _start(prep, q)[0], frozenset(), 0
    st, env = _start(prep, q)
    actions = _actions(prep, q, st, env)
    for step in steps:
        for m, st2, shows in game.legal(st, actions):
            if _render(game, m, shows) == step:
                st = st2
                break
        else:
            raise Disagreement(f"the step {step} does not replay in the interpreter")
    return st, frozenset(_points(steps[-1])), len(steps)


def _points(j):
    if isinstance(j, list):
        if len(j) == 3 and all(isinstance(x, int) and not isinstance(x, bool) for x in j):
            yield tuple(j)
        else:
            for x in j:
                yield from _points(x)
