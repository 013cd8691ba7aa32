"""Prove a game's invariants: each proved inductive (k = 1, jointly, by Houdini's fixpoint),
or checked by bounded model checking from the initial state ("holds up to depth k"), or
refuted with a trace that the interpreter replays.

The pipeline, one module a stage: the options (`options`), the base case here, the inductive
step of the state invariants (`induction`, its queries in `tiers`, split by `splits`), the
transition properties' step (`transitions`), then bounded model checking of the rest (`bmc`);
beside them the journal a long proof resumes from (`journal`), the symmetries that spare
paths (`orbits`) and the fork pool that shares paths out (`pool`)."""
from __future__ import annotations

import time

from ..engine.game import Game
from ..lang.errors import RulebookError
from . import abstractions, bmc, induction, orbits, regionfacts, transitions
from .journal import Journal, run_key
from .options import ProveOptions
from .result import Result


def prove(game: Game, options: ProveOptions = ProveOptions(), progress=None) -> list[Result]:
    """Prove the invariants of ``game`` under ``options`` (see `ProveOptions`), in the order
    the spec declares them; ``progress`` hears what the proof is doing (one line a call)."""
    only, alone = options.only, options.alone
    names = only
    known = {i.name for i in game.p.invariants}
    for n in names or ():
        if n not in known:
            raise RulebookError(f"{game.name} has no invariant named {n!r}")
    if alone and not names:
        raise RulebookError("proving invariants alone needs the invariants named")
    invs = [i for i in game.p.invariants if names is None or i.name in names]
    say = progress or (lambda msg: None)
    results: dict[str, Result] = {}
    t0 = time.perf_counter()

    # Base case, in the interpreter: the initial state.
    init = game.initial()
    for inv in invs:
        if not inv.transition and not game.holds(inv, init):
            results[inv.name] = Result(inv.name, "invariant", "refuted", 0,
                                       "false in the initial state")
    # Inductive step (Houdini): drop refuted candidates until the rest is inductive together.
    say("induction: building the symbolic step")
    # ``alone``: the named invariants are the only candidates (none of the others is assumed
    # as an auxiliary): fewer conjuncts per query, and what they prove needs no other.
    state_invs = [i for i in (invs if alone else game.p.invariants)
                  if not i.transition and i.name not in results]
    # The step reads each `exists real` as an uninterpreted predicate (abstractions.Opaque,
    # which the game's symbolic evaluator carries for the step): what holds for every
    # predicate holds for the true one, so "inductive" stays sound, and a step that needs no
    # more than "equal inputs, equal answers" is proved without real arithmetic.  ``exact_reals`` encodes them exactly instead (primal or Farkas dual).
    # ``region_facts``: the region builtins are unknowns with the facts of connected regions
    # (solver/prover/regionfacts.py), the other fixpoints uninterpreted as with ``opaque_fix``.
    exact_reals, region_facts = options.exact_reals, options.region_facts
    opaque_fix = options.opaque_fixpoints
    step = abstractions.Opaque(reals=not exact_reals, fixes=opaque_fix,
                               regions=regionfacts.RegionFacts() if region_facts else None)
    with game.symbolic.abstracted(step):
        log = None if options.journal is None else Journal(
            options.journal, run_key(game, options, state_invs), say)
        mirror = orbits.Symmetric(game, say) if options.symmetric else None
        inductive, ctis = induction.houdini(game, state_invs, options, say, log, mirror)
        trans = [i for i in invs if i.transition]
        trans_ok = transitions.check_transitions(game, trans, inductive, options, say, log,
                                                 mirror) if trans else {}
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
    # The rest: bounded model checking from the initial state.
    rest = [i for i in invs if i.name not in results]
    if rest:
        say(f"bounded model checking {', '.join(i.name for i in rest)} to depth "
            f"{options.bmc_depth}")
        for r in bmc.model_check(game, rest, options):
            if r.status == "holds":
                why = ctis.get(r.name) or (trans_ok.get(r.name, (None, ""))[1])
                if why:
                    r.detail = f"not inductive: {why}" + (
                        " (the step read each fixpoint as uninterpreted functions: that "
                        "state may be one the fixpoints rule out)" if opaque_fix else "")
            results[r.name] = r
    return [results[i.name] for i in invs]
