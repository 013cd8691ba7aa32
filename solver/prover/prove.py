"""Prove a game's invariants: each proved inductive (k = 1, jointly, by Houdini's fixpoint),
or checked by bounded model checking from the initial state ("holds up to depth k"), or
refuted with a trace that the interpreter replays.

The pipeline, one module a stage: the options (`options`), the base case here, the inductive
step of the state invariants (`induction`, its queries in `tiers`, split by `splits`), the
transition properties' step (`transitions`), then bounded model checking of the rest (`bmc`);
beside them the store of each path's verdict that a re-proof reuses (`store`), the journal
a long proof resumes from (`journal`), the symmetries that spare paths (`orbits`) and the
Dask workers that share the step's paths out (`cluster`, `workers`)."""
from __future__ import annotations

import time

from ..engine.game import Game
from ..lang.errors import RulebookError, stop_reason
from ..lang.irdigest import part_digests
from ..lang.progress import reporter
from . import abstractions, bmc, induction, orbits, seed, splits, tactics, transitions
from .journal import Journal, run_key
from .options import GAVE_UP, ProveOptions
from .result import Result, Tally
from .store import Store


def prove(game: Game, options: ProveOptions = ProveOptions(), progress=None,
          tally: Tally | None = None, seeds=(), engine=None) -> list[Result]:
    """Prove the invariants of ``game`` under ``options`` (see `ProveOptions`), in the order
    the spec declares them; ``progress`` hears what the proof is doing (`lang.progress`).
    ``tally``, if given, is filled in as the proof goes: how far it is, the path queries of
    the step and how many of them a previous run answered (`Tally.paths_json`).

    With ``options.time_limit_s``, bounded model checking comes first, one depth after the
    other up to ``options.bmc_depth`` (each completed depth is a verdict kept), then the
    inductive step with the time left; without, the inductive step first and bounded model
    checking of what it did not prove.  With ``options.keep_partial``, a Ctrl-C or the time
    limit (`TimeUp`, raised here once ``time_limit_s`` is past) ends the proof with what it
    established: each result then says where it stopped (``stopped``), an invariant is
    "holds up to depth k" only for a depth completed and "not decided" otherwise, never
    inductive unless the step finished.

    ``seeds``: (name, seed) pairs, the ``store_seed`` of stored proofs (`seed.plant`): the
    groups of those of this run's context that the store lacks are written into it first.

    ``engine`` (a `cluster.Engine`), if given: the inductive step's paths are checked by its
    Dask workers; without, in this process."""
    only, alone = options.only, options.alone
    names = only
    known = {i.name for i in game.p.invariants}
    for n in names or ():
        if n not in known:
            raise RulebookError(f"{game.name} has no invariant named {n!r}")
    if alone and not names:
        raise RulebookError("proving invariants alone needs the invariants named")
    if options.fix_budget_ms is not None and options.opaque_fixpoints and not options.auto:
        raise RulebookError("a fixpoint budget has no effect where every fixpoint is read as "
                            "uninterpreted functions (--opaque-fix, --region-facts)")
    invs = [i for i in game.p.invariants if names is None or i.name in names]
    say = reporter(progress)
    results: dict[str, Result] = {}
    held: dict[str, Result] = {}        # "holds up to depth k" by bounded model checking
    tally = Tally() if tally is None else tally
    deadline = None if options.time_limit_s is None else \
        time.monotonic() + options.time_limit_s
    # The program's digests, hashed once for every store of this proof (a second on Towers).
    stored = options.store is not None and options.journal is None
    digests = part_digests(game.p) if stored else None
    # The ladder's case split: a stored proof's where one of this run was made under another
    # than the pinned fields' (an expert's --split-on), so that its seed serves.
    split = seed.split_of(game, options, seeds, digests) if stored else None
    if split:
        say(f"tactics: the step split on {', '.join(split)}, as a stored proof of this run was")
    # Opened first: a bad store is said before any work; under the ladder's first pass,
    # whose context the seeds of its proofs are of.
    under_ = tactics.ladder(game, options, split=split)[0][1] \
        if options.auto and options.journal is None else options
    store = Store(options.store, game, under_, say, digests) if stored else None
    for name, s in seeds if store is not None else ():
        planted, _ = seed.plant(store, s)
        if planted:
            say(f"store: {planted} groups of paths seeded from {name}")
    hints = seed.hints(store, seeds) if store is not None else {}
    try:
        _prove(game, options, invs, say, results, held, tally, deadline, store, engine, hints,
               split)
    except KeyboardInterrupt as e:
        if not options.keep_partial:
            raise
        return _partial(invs, results, held, tally, stop_reason(e))
    return [results[i.name] for i in invs]


def _prove(game: Game, options: ProveOptions, invs: list, say, results: dict, held: dict,
           tally: Tally, deadline: float | None, store: Store | None, engine=None,
           hints: dict | None = None, split: tuple[str, ...] | None = None) -> None:
    """The passes of `prove`, filling ``results`` (final verdicts) and ``held`` (the depths
    bounded model checking completed) as they go; ``store``: where the step's verdicts are
    kept (`store.Store`), or None; ``hints``: the abstractions of the step that proved each
    action in the stored proofs (`seed.hints`); ``split``: the ladder's case split
    (`seed.split_of`)."""
    alone = options.alone
    t0 = time.perf_counter()

    # Base case, in the interpreter: the initial state.
    init = game.initial()
    for inv in invs:
        if not inv.transition and not game.holds(inv, init):
            results[inv.name] = Result(inv.name, "invariant", "refuted", 0,
                                       "false in the initial state")
    if deadline is not None:
        # Against the clock: a verdict for every invariant first, the deepest reached in time.
        for depth in range(1, options.bmc_depth + 1):
            rest = [i for i in invs if i.name not in results]
            if not rest:
                break
            tally.stage = f"bounded model checking at depth {depth}"
            say(f"bounded model checking {', '.join(i.name for i in rest)} to depth {depth}")
            for r in bmc.model_check(game, rest, options, depth, deadline, say):
                if r.status == "refuted":
                    results[r.name] = r
                elif r.status == "holds" or r.name not in held:
                    held[r.name] = r
            tally.depth = depth
    # Inductive step (Houdini): drop refuted candidates until the rest is inductive together.
    tally.stage = "the inductive step"
    say("induction: building the symbolic step")
    # ``alone``: the named invariants are the only candidates (none of the others is assumed
    # as an auxiliary): fewer conjuncts per query, and what they prove needs no other.
    state_invs = [i for i in (invs if alone else game.p.invariants)
                  if not i.transition and i.name not in results]
    trans = [i for i in invs if i.transition and i.name not in results]
    # ``auto``: the rungs of `tactics.ladder`, the next only where z3 gave up on the last.
    rungs = tactics.ladder(game, options, remote=engine is not None, split=split) \
        if options.auto and options.journal is None \
        else [("", options)]
    stores: dict = {}       # each rung's store keys its verdicts under its own abstraction

    def store_of(opts: ProveOptions):
        if store is None:
            return None
        if opts not in stores:
            stores[opts] = Store(opts.store, game, opts, say, store.digests)
        return stores[opts]
    first = _first_rung(game, rungs, hints or {}, state_invs, trans, store_of, say)
    if first:
        # An edited action is tried first where the stored proofs proved it, then, if
        # anything is left, the whole ladder.
        rungs = [rungs[first], *rungs]
    for k, (rung, opts) in enumerate(rungs):
        if rung:
            say(f"tactics: pass {k + 1} of at most {len(rungs)}: {rung} "
                f"({tactics.describe(opts)})")
            tally.passes += (rung,)
        log = store_of(opts) if rung else store
        inductive, ctis, trans_ok = _step(game, opts, state_invs, trans, say, log, tally,
                                          engine)
        failed = [*ctis.items(), *((n, w) for n, (ok, w) in trans_ok.items() if ok is not True)]
        fell = sorted(n for n, _ in failed)
        open_ = sorted(n for n, w in failed if str(w).startswith(GAVE_UP))
        if first and k == 0 and fell:
            say(f"tactics: {', '.join(fell)} not proved under {rung}: the whole ladder "
                f"follows, from {rungs[1][0]}")
            continue
        if not open_ or k + 1 == len(rungs):
            break
        say(f"tactics: z3 gave up on {', '.join(open_)} under {rung}: the actions it proved "
            f"are kept, the others tried under {rungs[k + 1][0]}")
    opaque_fix = opts.opaque_fixpoints
    tally.inductive = tuple(sorted(inductive))
    tally.transitions = tuple(sorted(n for n, (ok, _) in trans_ok.items() if ok is True))
    elapsed = time.perf_counter() - t0
    for inv in invs:
        if inv.name in results:
            continue
        if inv.transition:
            ok, detail = trans_ok[inv.name]
            if ok is True:
                results[inv.name] = Result(inv.name, "transition", "inductive", None, detail,
                                           seconds=elapsed)
            continue
        if inv.name in inductive:
            results[inv.name] = Result(inv.name, "invariant", "inductive", seconds=elapsed)
    # The rest: bounded model checking from the initial state (done already against the clock).
    rest = [i for i in invs if i.name not in results]
    missing = [i for i in rest if i.name not in held]
    if missing:
        tally.stage = f"bounded model checking at depth {options.bmc_depth}"
        say(f"bounded model checking {', '.join(i.name for i in missing)} to depth "
            f"{options.bmc_depth}")
        for r in bmc.model_check(game, missing, options, deadline=deadline, say=say):
            held[r.name] = r
    for inv in rest:
        r = held[inv.name]
        if r.status == "holds":
            why = ctis.get(r.name) or (trans_ok.get(r.name, (None, ""))[1])
            if why:
                r.detail = f"not inductive: {why}" + (
                    " (the step read each fixpoint as uninterpreted functions: that "
                    "state may be one the fixpoints rule out)" if opaque_fix else "")
        results[r.name] = r


def _step(game: Game, options: ProveOptions, state_invs: list, trans: list, say, store,
          tally: Tally, engine) -> tuple[set, dict, dict]:
    """One pass over the inductive step under ``options``' abstraction: the invariants
    proved inductive (Houdini), why each other fell, and each transition property's
    verdict."""
    held = _held_everywhere(game, options, state_invs, trans, store)
    if held is not None:
        # Nothing to build (on a large board, even the step's state takes minutes).
        say(f"induction: every path of every case held in a previous run ({store.label}): "
            f"nothing built")
        tally.count(held, held)
        return {i.name for i in state_invs}, {}, {t.name: (True, "") for t in trans}
    # The step reads each `exists real` as an uninterpreted predicate (abstractions.Opaque,
    # which the game's symbolic evaluator carries for the step): what holds for every
    # predicate holds for the true one, so "inductive" stays sound, and a step that needs no
    # more than "equal inputs, equal answers" is proved without real arithmetic.
    # ``exact_reals`` encodes them exactly instead (primal or Farkas dual).
    # ``region_facts``: the region builtins are unknowns with the facts of connected regions
    # (solver/prover/regionfacts.py), the other fixpoints uninterpreted as with ``opaque_fix``.
    with game.symbolic.abstracted(abstractions.for_step(options)):
        # The journal (an expert's log of one run) when asked for, else the store.
        log = Journal(options.journal, run_key(game, options, state_invs), say) \
            if options.journal is not None else store
        mirror = orbits.Symmetric(game, say) if options.symmetric else None
        tally.stage = "the inductive step"
        inductive, ctis = induction.houdini(game, state_invs, options, say, log, mirror,
                                            tally, engine)
        tally.stage = "the transition properties' step"
        trans_ok = transitions.check_transitions(game, trans, inductive, options, say, log,
                                                 mirror, tally, engine) if trans else {}
    return inductive, ctis, trans_ok


def _first_rung(game: Game, rungs: list, hints: dict, state_invs: list, trans: list,
                store_of, say) -> int:
    """The pass of ``rungs`` to try first (`tactics.first_rung`): the one that proved the
    actions the store leaves to check, by ``hints``; 0 where that is the first anyway."""
    if len(rungs) < 2 or not hints or not state_invs:
        return 0
    opts = rungs[0][1]
    log = store_of(opts)
    if log is None:
        return 0
    left, _ = _settled(game, opts, state_invs, trans, log)
    first = tactics.first_rung(rungs, hints, left) if left else 0
    if first:
        say(f"tactics: {', '.join(left)} left to check, proved under {rungs[first][0]} by "
            f"the stored proofs: tried there first")
    return first


def _settled(game: Game, options: ProveOptions, state_invs: list, trans: list,
             store: Store) -> tuple[list[str], int]:
    """The actions some case of the step has not settled in ``store`` (not every path held
    every one of ``state_invs``, or, from them, every one of ``trans``), in the game's
    order, and the number of path queries of those settled."""
    names = [i.name for i in state_invs]
    props = [t.name for t in trans]
    actions = store.actions
    left: set[str] = set()
    total = 0
    for ci in range(splits.case_count(game, options.split_on)):
        held = store.held_groups(ci, actions, names)
        left.update(a for a in actions if a not in held)
        total += sum(held.values())
        if props:
            moved = store.transition_held_groups(ci, actions, names, props)
            left.update(a for a in actions if a not in moved)
            total += len(props) * sum(moved.values())
    return [a for a in actions if a in left], total


def _held_everywhere(game: Game, options: ProveOptions, state_invs: list, trans: list,
                     store) -> int | None:
    """The number of path queries of the step when ``store`` (a `store.Store`) holds, for
    every case and every action, that its every path held every one of ``state_invs`` (so
    that they are inductive together) and, from them, every one of ``trans``; else None."""
    if not isinstance(store, Store) or not state_invs:
        return None
    left, total = _settled(game, options, state_invs, trans, store)
    return None if left else total


def _partial(invs: list, results: dict, held: dict, tally: Tally, why: str) -> list[Result]:
    """What a proof stopped part-way (``why``: "time limit (60 s)", "interrupted")
    established of each invariant: its final verdict where it has one, else the deepest
    depth bounded model checking completed, else "not decided"."""
    out = []
    where = f"stopped ({why}) {tally.where()}"
    for inv in invs:
        if inv.name in results:
            out.append(results[inv.name])
            continue
        kind = "transition" if inv.transition else "invariant"
        r = held.get(inv.name)
        if r is not None and r.status == "holds":
            out.append(Result(inv.name, kind, "holds", r.depth, f"{where}; not proved "
                              f"inductive", seconds=r.seconds, stopped=why))
        else:
            known = "" if inv.transition else "; holds in the initial state"
            out.append(Result(inv.name, kind, "undecided", None, f"{where}{known}",
                              stopped=why))
    return out
