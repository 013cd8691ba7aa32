"""The interpreter backend of puzzles: exhaustive search with memoisation (stopped early when a
run reaches the most the objective's shape allows, `objective_cap`), and branch and bound for a
query that declares `bound:`.  Every step is the interpreter's own move, so nothing here needs
replaying."""
from __future__ import annotations

import time
from itertools import compress
from operator import is_not
from weakref import WeakKeyDictionary

from ..lang.progress import reporter
from ..lang.sources import gc_paused

from ..lang import ir
from ..lang.errors import EvalError
from ..engine.game import Game
from ..lang.irwalk import nodes
from ..lang.types import IntT
from .puzzleprep import Prepared, query_actions, query_choices, query_start, step_json


class Stopped(KeyboardInterrupt):
    """A search stopped part-way (Ctrl-C or the time limit, ``stop``) with what it found:
    ``found`` (the runs, or the choices, found so far) and ``scope`` (what they cover)."""

    def __init__(self, stop: KeyboardInterrupt, found: list, scope: str):
        super().__init__(*stop.args)
        self.stop, self.found, self.scope = stop, found, scope


@gc_paused()
def search_runs(prep: Prepared, q: ir.Query, progress=None) -> list:
    """Every run of at most `within` moves that reaches the goal (stopping at its first goal
    state), as shown steps.  ``progress`` hears how many first moves are explored; stopped
    part-way, `Stopped` carries the runs found so far."""
    game = prep.game
    goal = game.concrete.expr(q.goal)
    within = game.concrete.expr(q.within)
    say = reporter(progress)
    out: list = []
    choices = query_choices(prep, q)
    where = ["before the first move"]
    try:
        for k, c in enumerate(choices):
            st0, env = query_start(prep, q, c)
            actions = query_actions(prep, q, st0, env)
            of = f" (choice {k + 1} of {len(choices)})" if len(choices) > 1 else ""

            def walk(st, d, path):
                if goal(st, env):
                    out.append(list(path))
                    return
                if d == 0:
                    return
                moves = game.legal(st, actions)
                for i, (m, st2, shows) in enumerate(moves):
                    if not path:
                        where[0] = f"{i} of {len(moves)} first moves explored{of}"
                        say(f"runs: first moves explored{of}", done=i, total=len(moves),
                            note=f"{len(out)} runs found")
                    path.append(step_json(game, m, shows))
                    walk(st2, d - 1, path)
                    path.pop()
            walk(st0, within(st0, env), [])
            walk = None     # the closure's cycle, freed now rather than by the collector
    except KeyboardInterrupt as e:
        raise Stopped(e, out, f"the runs found with {where[0]}: at least these") from None
    return out


@gc_paused()
def search_query(prep: Prepared, q: ir.Query, timeout_ms: int, progress=None) -> dict:
    """The search backend's answer, "unknown" after ``timeout_ms``: a query with a `bound:`
    then gives the best run found so far as the incumbent."""
    deadline = _clock() + timeout_ms / 1000
    game = prep.game
    goal = game.compiled(q.goal)
    obj = game.compiled(q.maximize) if q.maximize is not None else None
    within = game.compiled(q.within)
    choices = query_choices(prep, q)
    # An objective that reads no state (say, the size of the chosen bag) ranks the choices up
    # front: the first feasible one in that order is the optimum.  (With one choice there is
    # nothing to rank, and the objective is not walked.)
    static_obj = obj is not None and len(choices) > 1 and not _reads_state(q.maximize)
    # The steps of one best run are an answer: the search keeps the legal moves' order, so
    # that the run reported is the first best one in that order.
    keep_order = any(kind == "steps" for _, kind in q.answers)
    ranked = []
    for c in choices:
        st, env = query_start(prep, q, c)
        ranked.append((obj(st, env) if static_obj else 0, c, st, env))
    if static_obj:
        ranked.sort(key=lambda r: -r[0])
    bound = game.compiled(q.bound) if q.bound is not None and obj is not None else None
    best = None
    for k, (_, c, st, env) in enumerate(ranked):
        if bound is not None and not static_obj:
            try:
                res = _search_bb(game, st, env, goal, obj, bound, within(st, env),
                                 query_actions(prep, q, st, env), deadline, progress)
            except Stopped as s:
                so_far, top = s.incumbent
                if so_far is not None and (best is None or so_far[0] > best[0]):
                    best = so_far
                s.incumbent = (best, max([top] + ([best[0]] if best else [])
                                         + [bound(st2, env2) for _, _, st2, env2
                                            in ranked[k + 1:]]))
                s.scope = (f"the best run found before the search was stopped (choice "
                           f"{k + 1} of {len(ranked)}); the optimum is at most "
                           f"{s.incumbent[1]}")
                raise
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
            cap = objective_cap(game, q.maximize, st, env, fixed_slots(prep, q)) \
                if obj is not None else None
            try:
                res = _search_one(game, st, env, goal, obj, within(st, env),
                                  query_actions(prep, q, st, env), deadline, progress,
                                  f" (choice {k + 1} of {len(ranked)})" if len(ranked) > 1
                                  else "", cap=cap, greedy=cap is not None and not keep_order,
                                  steps=keep_order)
            except _OutOfTime:
                # Exhaustive, so nothing found so far is claimed: no answer within the time.
                return {"found": "unknown", "steps": None, "best": "unknown"}
        if res is None:
            continue
        if best is None or (obj is not None and res[0] > best[0]):
            best = res
        if obj is None or static_obj:
            break
    if best is None:
        return {"found": False, "steps": None, "best": None}
    return {"found": True, "steps": best[1], "best": best[0] if obj is not None else None}


@gc_paused()
def search_all(prep: Prepared, q: ir.Query, progress=None) -> list:
    """Every choice of the query's `choose` from which a run reaches the goal.  ``progress``
    hears how far the search is; stopped part-way, `Stopped` carries the choices found so
    far."""
    game = prep.game
    goal = game.concrete.expr(q.goal)
    within = game.concrete.expr(q.within)
    say = reporter(progress)
    found: list = []
    choices = query_choices(prep, q)
    pins = tuple(e for _, es in q.pins for e in es if e is not None)
    where = ["before the first choice"]
    try:
        if _reads_slot(q.setup, q.choose.slot) or _reads_slot(q.within, q.choose.slot) \
                or any(_reads_slot(e, q.choose.slot) for e in pins):
            for k, c in enumerate(choices):
                where[0] = f"{k} of {len(choices)} choices checked"
                say("choices checked", done=k, total=len(choices), note=f"{len(found)} found")
                st, env = query_start(prep, q, c)
                if _search_one(game, st, env, goal, None, within(st, env),
                               query_actions(prep, q, st, env), steps=False) is not None:
                    found.append(c)
        else:
            # The start does not depend on the choice: explore the runs once, then ask the
            # goal of every state reached for each choice.
            st, env = query_start(prep, q, choices[0])
            where[0] = "the states reachable not all explored yet: no choice checked"
            reached = _reachable(game, st, within(st, env), query_actions(prep, q, st, env),
                                 say)
            s1 = q.choose.slot + 1
            for k, c in enumerate(choices):
                where[0] = f"{k} of {len(choices)} choices checked"
                env[s1] = c
                if any(goal(x, env) for x in reached):
                    found.append(c)
    except KeyboardInterrupt as e:
        raise Stopped(e, found, f"{where[0]}: these have a solution, the others unknown") \
            from None
    return found


def _reads_state(e: ir.Expr) -> bool:
    return any(isinstance(n, ir.StateRef) for n in nodes(e))


def _search_one(game: Game, st0, env, goal, obj, depth: int, actions,
                deadline: float | None = None, progress=None, what: str = "",
                cap: int | None = None, greedy: bool = False, steps: bool = True):
    """Best (objective, shown steps) over runs of at most ``depth`` moves ending in a goal.
    Past ``deadline`` (checked on every state: one state's goal or objective can take
    seconds) it raises `_OutOfTime`; ``progress``
    hears how many of the first moves are explored (`lang.progress`).

    ``cap``: a value the objective never exceeds (`objective_cap`): a run worth it is a best
    run, and the search stops there.  The run reported is then still the first best run in
    the order of the legal moves.  With ``greedy``, the moves are tried in decreasing order of
    the objective of the state they reach (a goal state first), so that a run worth ``cap``
    tends to be met early: the best value is the same, the run reported may differ.
    Without ``steps`` (the query answers none), the run is not replayed: None in its place."""
    memo: dict = {}
    say = reporter(progress)
    missing = memo                      # a sentinel no memo entry is

    def value_of(st):
        # (objective, ()) if st is a goal state, else None.
        if goal(st, env):
            return (obj(st, env) if obj else 0), ()
        return None

    def best_from(st, d, here=missing):
        if d == 0 and st is not st0:
            # No move left: the state's own worth, cheaper to evaluate than to look up.
            if deadline is not None and _clock() > deadline:
                raise _OutOfTime(None, None)
            return value_of(st) if here is missing else here
        # The memo is keyed by a hash of the state and the moves left, each entry a list of
        # (state, best): a state is a large tuple, which Python would hash afresh on the
        # lookup and again on the store.  The hash reads only the fields that are not the
        # start's own objects (a move rebuilds the fields it writes and shares the others):
        # a state equal to one met before but with another field rebuilt equal would miss
        # it and be searched again, the same best found; a hit is an equal state.
        key = (hash(tuple(compress(st, map(is_not, st, st0)))), d)
        seen = memo.get(key)
        if seen is not None:
            for st1, hit in seen:
                if st1 is st or st1 == st:
                    return hit
        if deadline is not None and _clock() > deadline:
            raise _OutOfTime(None, None)
        best = value_of(st) if here is missing else here
        if best is not None and (obj is None or (cap is not None and best[0] >= cap)):
            memo.setdefault(key, []).append((st, best))
            return best
        if d > 0:
            moves = game.legal(st, actions, False)
            top = progress is not None and st is st0 and d == depth
            if top:
                moves = list(moves)
            if greedy:
                ranked = [(value_of(st2), i, m, st2, shows)
                          for i, (m, st2, shows) in enumerate(moves)]
                ranked.sort(key=lambda r: (r[0] is None, -r[0][0] if r[0] else 0, r[1]))
                kids = [(m, st2, shows, v) for v, _, m, st2, shows in ranked]
            else:
                kids = [(m, st2, shows, missing) for m, st2, shows in moves]
            for i, (m, st2, shows, v) in enumerate(kids):
                if top:
                    say(f"search: first moves explored{what}", done=i, total=len(kids),
                        note=f"{len(memo)} states"
                        + (f", best {best[0]} so far" if best and obj else ""))
                sub = best_from(st2, d - 1, v)
                if sub is not None and (best is None or sub[0] > best[0]):
                    best = (sub[0], ((m, shows),) + sub[1])
                    if obj is None or (cap is not None and best[0] >= cap):
                        break
        memo.setdefault(key, []).append((st, best))
        return best

    try:
        res = best_from(st0, depth)
    finally:
        # `best_from` calls itself through its closure: that cycle would keep the memo (every
        # state met) alive until the cyclic collector's next pass, which then walks them all.
        best_from = None
    if res is None:
        return None
    return res[0], (_shown(game, st0, res[1]) if steps else None)


def fixed_slots(prep: Prepared, q: ir.Query) -> frozenset:
    """The frame slots fixed for a whole query: its inputs and its choice."""
    slots = {i.slot for i in prep.puzzle.inputs}
    if q.choose is not None:
        slots.add(q.choose.slot)
    return frozenset(slots)


def objective_cap(game: Game, e: ir.Expr, st, env, fixed: frozenset) -> int | None:
    """A value the integer objective ``e`` cannot exceed in any state, from its shape: a part
    that reads neither the state nor any variable but those in ``fixed`` (the query's inputs
    and choice) is evaluated in ``env``, a `size` or `len` is at least 0, sums and differences
    are bounded from their terms', anything else by its type's range.  None when that gives
    nothing tighter than the type of ``e`` itself."""
    if not isinstance(e.type, IntT):
        return None
    # The shape is read once per game, objective and fixed slots (a batch of puzzles asks
    # every puzzle's cap of the same query); only the fixed parts are evaluated each time.
    plans = _CAP_PLANS.setdefault(game, {})
    hit = plans.get((id(e), fixed))
    if hit is None or hit[0] is not e:
        try:
            hit = plans[id(e), fixed] = (e, _interval(game, e, fixed))
        except _CAP_ERRORS:
            hit = plans[id(e), fixed] = (e, None)
    if hit[1] is None:
        return None
    try:
        _, hi = hit[1](st, env)
    except _CAP_ERRORS:
        return None
    return hi if hi < e.type.hi else None


_CAP_ERRORS = (EvalError, ArithmeticError, TypeError, ValueError, IndexError, KeyError)
# `objective_cap`'s reading of each objective's shape, per game (and gone with it).
_CAP_PLANS: WeakKeyDictionary = WeakKeyDictionary()


# Nodes that read nothing but their operands: a tree of them over constants and fixed slots
# has one value for the whole query.
_PURE = (ir.Const, ir.Binary, ir.Unary, ir.Builtin, ir.Field, ir.Index, ir.Member, ir.Ite,
         ir.RecordLit, ir.SeqLit, ir.BagLit)


def _fixed(e, fixed: frozenset) -> bool:
    if isinstance(e, ir.Local):
        return e.slot in fixed
    if not isinstance(e, _PURE):
        return False
    if isinstance(e, ir.Const):
        return True
    args = list(_operands(e))
    # Every builtin is a function of its arguments alone (none reads the state by itself).
    return bool(args) and all(_fixed(c, fixed) for c in args)


def _operands(e):
    for f in e.__dataclass_fields__:
        if f in ("type", "span"):
            continue
        v = getattr(e, f)
        if isinstance(v, tuple):
            yield from (x for x in v if hasattr(x, "__dataclass_fields__"))
        elif hasattr(v, "__dataclass_fields__"):
            yield v


def _interval(game: Game, e, fixed: frozenset):
    """``f(st, env) -> (lowest, highest)``: the range of the integer expression ``e`` over
    every state, its fixed parts evaluated in ``env``."""
    t = e.type
    if _fixed(e, fixed):
        f = game.compiled(e)

        def value(st, env):
            v = f(st, env)
            return v, v
        return value
    if isinstance(e, ir.Binary) and e.op in ("+", "-") and isinstance(t, IntT):
        left, right = _interval(game, e.left, fixed), _interval(game, e.right, fixed)
        plus = e.op == "+"

        def sum_(st, env):
            (llo, lhi), (rlo, rhi) = left(st, env), right(st, env)
            lo, hi = (llo + rlo, lhi + rhi) if plus else (llo - rhi, lhi - rlo)
            return max(lo, t.lo), min(hi, t.hi)
        return sum_
    if isinstance(e, ir.Unary) and e.op == "neg" and isinstance(t, IntT):
        arg = _interval(game, e.arg, fixed)

        def neg(st, env):
            lo, hi = arg(st, env)
            return max(-hi, t.lo), min(-lo, t.hi)
        return neg
    if isinstance(e, ir.Builtin) and e.name in ("size", "len") and isinstance(t, IntT):
        return lambda st, env: (max(0, t.lo), t.hi)
    if isinstance(t, IntT):
        return lambda st, env: (t.lo, t.hi)
    raise TypeError(t)


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
                    (best[0], _shown(game, st0, best[1]))
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
        if best[0] is not None and b <= best[0]:
            # st's own value reached its bound: no run through it does better, and its moves
            # are not listed (the loop below would stop at the first).
            return
        # The most promising moves first, so that a good plan is found early and prunes more.
        # A successor already explored with as many moves left adds nothing (its goal value
        # was met then): it is skipped before its bound is computed.  A successor with no
        # move left is worth its objective exactly (or nothing, off the goal): that is what
        # ranks it, and its bound (costlier, and no tighter) is not computed.
        rank = bound_of if d > 1 else (lambda st2: obj(st2, env) if goal(st2, env) else None)
        kids = sorted(((r, i, m, st2, shows)
                       for i, (m, st2, shows) in enumerate(game.legal(st, actions, False))
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

    try:
        visit(st0, depth, bound_of(st0))
    except KeyboardInterrupt as e:
        # Ctrl-C or the time limit: the best run so far, as the search's own deadline gives.
        so_far = None if best[1] is None else \
            (best[0], _shown(game, st0, best[1]))
        s = Stopped(e, [], "")
        s.incumbent = (so_far, at_most())
        raise s from None
    finally:
        visit = None                    # the closure's cycle, as in `_search_one`
    if best[0] is None:
        return None
    return best[0], _shown(game, st0, best[1])


def _shown(game: Game, st0, path: list) -> list:
    """The steps of a run found by `_search_one` or `_search_bb` (their moves were listed
    without their shows, which a search would render for every move it tries):
    each move replayed from ``st0`` as the action shows it."""
    out = []
    st = st0
    for m, _ in path:
        st, shows = game.action(m.action).apply(st, m.params)
        out.append(step_json(game, m, shows))
    return out


def _reads_slot(node, slot: int) -> bool:
    return any(isinstance(n, ir.Local) and n.slot == slot for n in nodes(node))


def _reachable(game: Game, st0, depth: int, actions, say=None) -> list:
    """Every state reachable in at most ``depth`` moves (the start included), each once."""
    seen = {st0}
    layer = [st0]
    for d in range(depth):
        if say is not None:
            say(f"states reachable: depth {d + 1} of {depth}, {len(seen)} states so far")
        nxt = []
        for st in layer:
            for _, st2, _ in game.legal(st, actions):
                if st2 not in seen:
                    seen.add(st2)
                    nxt.append(st2)
        layer = nxt
    return list(seen)
