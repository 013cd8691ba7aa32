"""The Z3 backend of puzzles: the runs from the query's start unrolled into constraints (or,
from a wholly concrete start within a budget, the states listed by the interpreter and only the
runs between them left to z3), the goal asserted and the objective maximised.  Every run z3
finds is replayed in the interpreter (`puzzleprep.replay`) before it is reported."""
from __future__ import annotations

import time

import z3

from ..engine import domains as dz
from ..lang import ir
from ..lang.errors import Disagreement, InputError
from ..engine.symbolic import (Unknown, check, encode_runs, explore, make_solver, read_moves,
                               read_run, unroll)
from ..lang.types import BagT, IntT
from .puzzleprep import Prepared, query_actions, query_choices, query_start, replay

# Unrolling keeps up to this many concrete successor states apart per step before merging
# them into symbolic ones (see `symbolic.unroll`).
EXACT_BUDGET = 256
# From a wholly concrete start, the states within the bound are listed one by one up to this
# many (see `symbolic.explore`); past it the layered unrolling above takes over.  Listing is
# cheap (a few thousand states take a second or less in the interpreter) and z3 then only
# decides which listed states a run reaches, while the unrolling's merged symbolic states can
# cost z3 minutes: three golden and bench puzzles of 295, 564 and 2,104 states went from
# minutes (or "unknown") unrolled to under 3 s listed (docs/puzzles.md).  A larger space is
# unrolled.
EXPLICIT_BUDGET = 4096


def z3_runs(prep: Prepared, q: ir.Query, timeout_ms: int):
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
        u = unroll(game, st0, depth, query_actions(prep, q, st0, env, True),
                   exact_budget=EXACT_BUDGET, deadline=deadline)
    except Unknown:
        return "unknown"
    fgoal = game.symbolic.expr(q.goal)
    plain = dz.is_concrete(tuple(env))
    cgoal = game.concrete.expr(q.goal) if plain else None
    # A run stops at its first goal state: the goal must not hold earlier on the path.
    s = make_solver(timeout_ms, sides=game.symbolic.sides)
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


def z3_query(prep: Prepared, q: ir.Query, timeout_ms: int) -> dict:
    """The query on the z3 backend, within ``timeout_ms`` in all: the unrolling and every
    check share one deadline."""
    game = prep.game
    deadline = time.monotonic() + timeout_ms / 1000
    if q.choose is None:
        # Nothing chosen: the inputs (from JSON) and so the start are concrete.
        st0, env = query_start(prep, q)
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
        u = unroll(game, st0, depth, query_actions(prep, q, st0, env, True),
                   exact_budget=EXACT_BUDGET, deadline=deadline)
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
    s = make_solver(timeout_ms, sides=game.symbolic.sides)
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
        ex = explore(game, st0, depth, query_actions(prep, q, st0, env), EXPLICIT_BUDGET, deadline)
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
    return max(prep.game.compiled(q.within)(*query_start(prep, q, c))
               for c in query_choices(prep, q))


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


def z3_all(prep: Prepared, q: ir.Query, et, timeout_ms: int):
    """Enumerate the feasible choices with z3, blocking each one found; every one is replayed
    in the interpreter before it is reported.  The unrolling and every check share
    ``timeout_ms``: past it the answer is None ("unknown"), never a partial list."""
    game = prep.game
    deadline = time.monotonic() + timeout_ms / 1000
    fresh = dz.Fresh("choose_")
    chosen = fresh.value(et, q.choose.name)
    st0, env = _start_sym(prep, q, chosen)
    depth = game.concrete.expr(q.within)(*query_start(prep, q, query_choices(prep, q)[0]))
    try:
        u = unroll(game, st0, depth, query_actions(prep, q, st0, env, True),
                   exact_budget=EXACT_BUDGET, deadline=deadline)
    except Unknown:
        return None
    fgoal = game.symbolic.expr(q.goal)
    goal = u.final(lambda st: fgoal(st, env), None)
    s = make_solver(timeout_ms, sides=game.symbolic.sides)
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
