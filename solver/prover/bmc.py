"""Bounded model checking: the invariants the step did not prove, checked on every state
reachable from the initial one in a few moves; a violation z3 finds is replayed in the
interpreter, whose trace is the refutation."""
from __future__ import annotations

import time

import z3

from ..engine import domains as dz
from ..engine.evaluate import Refused
from ..engine.game import Game, Move
from ..engine.symbolic import Unknown, check, make_solver, read_moves, unroll
from ..lang import ir
from ..lang.errors import RulebookError, TimeUp
from .options import ProveOptions
from .result import Result


def model_check(game: Game, invs: list[ir.Invariant], options: ProveOptions,
                depth: int | None = None, deadline: float | None = None,
                say=None) -> list[Result]:
    """Check the invariants on every state reachable in at most ``depth`` moves (by default
    ``options.bmc_depth``), each query within ``options.timeout_ms`` and none past
    ``deadline`` (a `time.monotonic()` instant: past it, `TimeUp`)."""
    depth = options.bmc_depth if depth is None else depth
    timeout_ms = options.timeout_ms
    say = say or (lambda *a, **k: None)
    init = game.initial()
    out = []
    t0 = time.perf_counter()
    try:
        u = unroll(game, init, depth, None, prefix="b", deadline=deadline)
    except Unknown:
        raise TimeUp(options.time_limit_s) from None   # only the deadline makes it give up
    for n, inv in enumerate(invs):
        say(f"bounded model checking to depth {depth}: invariants checked", done=n,
            total=len(invs), note=inv.name)
        start = time.perf_counter()
        kind = "transition" if inv.transition else "invariant"
        solver = make_solver(timeout_ms, sides=game.symbolic.sides)
        solver.add(*u.constraints)
        if inv.transition:
            bad = _transition_violation(game, inv, u)
        else:
            bad = z3.Not(dz.lift(u.final(lambda st: game.holds_symbolic(inv, st))))
        solver.add(bad)
        try:
            found = check(solver, deadline=_until(deadline, timeout_ms))
        except Unknown:
            if deadline is not None and time.monotonic() >= deadline - 0.05:
                raise TimeUp(options.time_limit_s) from None
            out.append(Result(inv.name, kind, "unknown", depth, "z3 gave up",
                              seconds=time.perf_counter() - start))
            continue
        if not found:
            out.append(Result(inv.name, kind, "holds", depth,
                              seconds=time.perf_counter() - start + (start - t0)))
            continue
        moves = read_moves(game, u, solver.model())
        trace, k = _replay_violation(game, inv, moves)
        trace, k = _shortest(game, inv, u, solver, trace, k, deadline, timeout_ms)
        out.append(Result(inv.name, kind, "refuted", k, "violated after the trace", trace,
                          seconds=time.perf_counter() - start))
    return out


def _shortest(game: Game, inv: ir.Invariant, u, solver, trace, k: int, deadline, timeout_ms):
    """The shortest trace that breaks ``inv``: z3's model is any run of the unrolling that
    does, its length depending on what the process asked z3 before, so runs of fewer moves
    are asked for, one length after the other; where z3 gives up on one, the trace found
    stands."""
    for j in range(1, k):
        try:
            found = check(solver, u.at_most(j), deadline=_until(deadline, timeout_ms))
        except Unknown:
            break
        if found:
            return _replay_violation(game, inv, read_moves(game, u, solver.model()))
    return trace, k


def _until(deadline: float | None, timeout_ms: int) -> float | None:
    """When one query must end: its time-out from now, or the run's deadline if sooner."""
    return None if deadline is None else min(deadline, time.monotonic() + timeout_ms / 1000)


def _transition_violation(game: Game, inv: ir.Invariant, u):
    """Some step of the unrolling where the transition property fails."""
    bad = []
    for layer, nxt in zip(u.layers[:-1], u.layers[1:]):
        for node in layer:
            for i, target in enumerate(node.succ):
                after = nxt[target].state
                if i == len(node.branches):
                    continue
                after = node.branches[i].state
                holds = game.holds_symbolic(inv, after, old=node.state)
                bad.append(z3.And(dz.lift(node.active), node.choice == i, z3.Not(holds)))
    return z3.Or(bad) if bad else z3.BoolVal(False)


def _replay_violation(game: Game, inv: ir.Invariant, moves: list[Move]):
    """Replay the solver's trace in the interpreter; return (trace as JSON, depth of violation)."""
    st = game.initial()
    trace = []
    for k, m in enumerate(moves, 1):
        old = st
        try:
            st, _ = game.apply(st, m)
        except Refused as r:
            raise RulebookError(f"the solver's trace does not replay: {m.label(game)} is refused "
                                f"by {r.rule}") from None
        trace.append(m.to_json(game))
        if (inv.transition and not game.holds(inv, st, old)) or \
                (not inv.transition and not game.holds(inv, st)):
            return trace, k
    raise RulebookError(f"the solver's counterexample to {inv.name} does not replay in the "
                        f"interpreter")

