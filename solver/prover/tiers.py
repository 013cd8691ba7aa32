"""The tiers of one step query: an invariant's conjuncts changed by one action path, proved
from growing sets of assumptions (its own old conjuncts, those about the same few things,
those near it, all of them), one conjunct at a time when z3 gives up on them together, after
`sameterms` has put back the terms the path leaves as they were; and, with length splitting,
case by case (`splits.split_tiers`).  A tier that proves nothing decides nothing: the next
one follows, and the last one's model is a counterexample to induction."""
from __future__ import annotations

import z3

from ..engine.symbolic import Unknown, abstraction_of
from . import nearby, sameterms, splits, terms
from .abstractions import regions_of

# The tier of the conjuncts near the changed ones gets this long (ms): past it, the next tier.
MID_MS = 2_000
# With length splitting on, a step query first gets this long as one query (ms).
QUICK_MS = 2_000
# `sameterms.same_terms` is skipped at first on the paths of an action where it found nothing
# on this many paths, unless the check without it gave up this many times among its latest
# SAME_TERM_WINDOW, more than half of them (see `step`).  Only the latest count: on a path
# that moves one item of a conserved count from one sequence to another, the first path's
# other conjuncts were proved as they are, each in milliseconds, and the next paths' were not,
# each costing its three tiers at QUICK_MS before the reduction proved it at once: 93 s a path,
# while a majority of all the action's checks was awaited; with the window, 26 s on the path
# where they stop being proved, 1 to 7 s on the next ones.
SAME_TERM_MISSES = 3
SAME_TERM_WINDOW = 4
# With length splitting on, the changed conjuncts of a path are first tried together within
# QUICK_MS; on the paths of an (action, invariant) where that gave up JOINT_MISSES times, more
# than half of its latest JOINT_WINDOW tries, they go one at a time directly: an action whose
# joint try gave up on every path spent 2 s of its 5.6 s a path on it (bench/README.md).
JOINT_MISSES = 2
JOINT_WINDOW = 4
# `_congruent` asks of this many arguments at once whether one differs, then, if z3 gives up,
# of each; each query gets this long (ms).
CONGRUENCE_GROUP = 24
CONGRUENCE_MS = 5_000


def step_each(local, guard, goal, conj, name, items, readers, candidates, memo, split,
              timeout_ms):
    """`step` for all the conjuncts of an invariant a path changes at once; when z3 gives up
    on them together, one conjunct at a time, each with its own nearby assumptions (fewer
    than those of all the conjuncts).  A path that rewrites a whole map (a count per key)
    changes one conjunct per key: z3 may give up on eighty of them together, and prove each
    alone in about a second.
    """
    try:
        return step(local, guard, goal, conj, name, items, readers, candidates, memo, split,
                     timeout_ms)
    except Unknown:
        if len(items) == 1:
            raise
    for k, c2 in items:
        verdict = step(local, guard, z3.Not(c2), conj, name, [(k, c2)], readers, candidates,
                        memo, split, timeout_ms)
        if verdict is not None:
            return verdict
    return None


def step(local, guard, goal, conj, name, items, readers, candidates, memo, split, timeout_ms):
    """The tiers for one invariant on one path.  With ``split`` (prove's ``split_lengths``), a
    query of one conjunct that z3 gives up on within QUICK_MS is checked again case by case
    over the sequence lengths the step changes (splits.split_tiers), and the other paths of that
    action go there directly for that invariant; a query that cannot be split gets the whole
    step time-out.  A query of several conjuncts is only tried quickly, and left to
    `step_each`, which takes them one at a time.

    A single conjunct is first rid of the terms of its sums that equal their previous
    versions whatever the values (`sameterms.same_terms`): a count of one value over a
    sequence that an item of another value was pushed onto is the same count, slot by slot.
    Once that has found nothing on SAME_TERM_MISSES paths of an action, the conjunct is first
    checked as it is within QUICK_MS, and reduced only when z3 gives up on that (the
    reduction is only worth its cost, a second a conjunct on a path that rewrites a whole
    sequence, where it finds identities; the verdicts stay those with it).  An action where z3
    gave up on more than half of its latest such checks (SAME_TERM_WINDOW), SAME_TERM_MISSES at
    least, is reduced first again."""
    reduced = False
    if len(items) == 1 and items[0][0] < len(conj[name]):
        k, c2 = items[0]
        # Many paths of an action give the very same conjunct (they differ in the guard):
        # its reduction is worked out once.  The entry holds both terms, so that their ids
        # are not reused while it stands.
        c1 = conj[name][k]
        hit = memo.get(("same", c1.get_id(), c2.get_id()))
        if hit is not None and not (hit[0].eq(c1) and hit[1].eq(c2)):
            hit = None
        # Paths of this action where the reduction found something, found nothing, and
        # where the conjunct as it is was tried first, and not proved so.
        # the latest checks as it is (True: z3 gave up), at most SAME_TERM_WINDOW.
        tally = memo.setdefault(("same-tally", split[4] if split else name), [0, 0, []])
        recent = tally[2]
        if hit is None and tally[1] >= SAME_TERM_MISSES and not _mostly_gave_up(
                recent, SAME_TERM_MISSES):
            try:
                # None (proved), or a counterexample to the conjunct: one to its reduction
                # too (the same formula, some terms written otherwise).
                with terms.time_limit(local, min(QUICK_MS, timeout_ms), timeout_ms):
                    verdict = tiers(local, guard, goal, conj, name, items, readers,
                                    candidates, memo, None, min(QUICK_MS, timeout_ms))
                _latest(recent, False, SAME_TERM_WINDOW)
                return verdict
            except Unknown:
                _latest(recent, True, SAME_TERM_WINDOW)
        if hit is None:
            hit = memo[("same", c1.get_id(), c2.get_id())] = (c1, c2, sameterms.same_terms(c1, c2))
            tally[0 if not hit[2].eq(c2) else 1] += 1
        c3 = hit[2]
        if c3.eq(conj[name][k]):
            return None
        if not c3.eq(c2):
            items, goal, reduced = [(k, c3)], z3.Not(c3), True
    return _step_on(local, guard, goal, conj, name, items, readers, candidates, memo, split,
                    timeout_ms, reduced)


def _mostly_gave_up(recent: list, misses: int) -> bool:
    """Whether z3 gave up on at least ``misses`` of the ``recent`` tries (True: gave up), more
    than half of them."""
    return sum(recent) >= misses and 2 * sum(recent) > len(recent)


def _latest(recent: list, gave_up: bool, window: int) -> None:
    """``gave_up`` added to the ``recent`` tries, of which the latest ``window`` are kept."""
    recent.append(gave_up)
    del recent[:-window]


def _step_on(local, guard, goal, conj, name, items, readers, candidates, memo, split,
             timeout_ms, reduced):
    """`step` once the conjunct is reduced (``reduced``: it was)."""
    if not split:
        return tiers(local, guard, goal, conj, name, items, readers, candidates, memo, None,
                      timeout_ms)
    lengths, moved, cache, learned, key = split
    if lengths is None:
        # No length splitting: several conjuncts are tried together briefly, then one at a
        # time (`step_each`), and the action's later paths go one at a time directly.  A
        # path that rewrites a whole map (a count per key, all written at once) changes
        # eighty conjuncts: together they cost the whole time-out each path, one at a time
        # a few milliseconds each.
        if len(items) == 1:
            return tiers(local, guard, goal, conj, name, items, readers, candidates, memo,
                          None, timeout_ms)
        if key in learned:
            raise Unknown("one conjunct at a time")
        try:
            with terms.time_limit(local, min(QUICK_MS, timeout_ms), timeout_ms):
                return tiers(local, guard, goal, conj, name, items, readers, candidates,
                              memo, None, min(QUICK_MS, timeout_ms))
        except Unknown:
            learned.add(key)
            raise
    if len(items) > 1 and key in learned:
        # Split, many conjuncts make many cases each: step_each takes them one at a time.
        raise Unknown("split one conjunct at a time")
    # The latest tries of several conjuncts together on this key's paths (True: gave up).
    recent = memo.setdefault(("joint-tally", key), []) if len(items) > 1 else []
    if _mostly_gave_up(recent, JOINT_MISSES):
        raise Unknown("one conjunct at a time")
    if key not in learned or reduced:
        quick = min(QUICK_MS, timeout_ms)
        try:
            with terms.time_limit(local, quick, timeout_ms):
                verdict = tiers(local, guard, goal, conj, name, items, readers, candidates,
                                memo, None, quick)
            _latest(recent, False, JOINT_WINDOW)
            return verdict
        except Unknown:
            if len(items) > 1:
                _latest(recent, True, JOINT_WINDOW)
                raise       # one at a time first: each alone is often proved without a split
    try:
        verdict = splits.split_tiers(local, guard, conj, name, items, readers, candidates, memo,
                               lengths, moved, cache, key)
        learned.add(key)
        return verdict
    except splits.TooManyCases:
        return tiers(local, guard, goal, conj, name, items, readers, candidates, memo, None,
                      timeout_ms)


def tiers(local, guard, goal, conj, name, items, readers, candidates, memo, full, local_ms):
    """Prove ``guard -> not goal`` from growing sets of assumptions; return None when proved,
    else a model of a counterexample to induction (from the full set of assumptions).
    ``local_ms``: the time limit the ``local`` solver is set to."""
    own = [conj[name][k] for k, _ in items if k < len(conj[name])]
    if regions_of(abstraction_of(local)) is not None and len(items) == 1 and _sliced_proof(
            local, guard, goal, own, memo, local_ms):
        return None
    if terms.check_assume(local, z3.And(guard, goal, *own)) is None:
        return None
    if len(items) == 1 and len(own) == 1 and _congruent(
            local, guard, own[0], items[0][1], conj, readers, candidates, memo, local_ms):
        return None
    # Then, within a short time each, the conjuncts about the same few things as the changed
    # ones (those that read their rarely read variables: the same key's count kept by
    # another invariant), then all that read what they read, before or after the step (a
    # count kept by its own conjunct and by another that bounds the same entries): the
    # path's guard alone often reads many more.
    with terms.time_limit(local, min(MID_MS, local_ms), local_ms):
        for pick in (nearby.rare, nearby.near):
            try:
                if terms.check_assume(local, z3.And(guard, goal, *own, *pick(
                        z3.And(goal, *own), conj, readers, candidates, memo))) is None:
                    return None
            except Unknown:
                pass
    model = terms.check_assume(local, z3.And(guard, goal,
                                        *nearby.near(z3.And(guard, goal), conj, readers,
                                                     candidates, memo)))
    if model is None or full is None:
        return model
    return terms.check_assume(full(), z3.And(guard, goal))


def _sliced_proof(local, guard, goal, own, memo, local_ms) -> bool:
    """Under the region facts, whether one conjunct is proved from the facts about its own
    squares, the guard's and those around the change alone (`RegionFacts.sliced`), within
    QUICK_MS.  On a large grid all the facts of a step are tens of thousands, most about
    squares the conjunct does not name: a bound on one square's column needs its own rows,
    not every other square's.  Fewer assumptions: a proof under them is a proof; anything
    else decides nothing (the full query follows)."""
    facts = regions_of(abstraction_of(local))
    key = ("guard-squares", guard.get_id())
    hit = memo.get(key)
    if hit is None or not hit[0].eq(guard):
        hit = memo[key] = (guard, facts.squares_in([guard]))
    squares = hit[1] | facts.squares_in([goal, *own])
    try:
        with facts.sliced(squares), \
                terms.time_limit(local, min(QUICK_MS, local_ms), local_ms):
            return terms.check_assume(local, z3.And(guard, goal, *own)) is None
    except Unknown:
        return False


def _congruent(local, guard, old, new, conj, readers, candidates, memo, local_ms) -> bool:
    """Whether ``new`` holds because it is ``old`` (assumed), one uninterpreted predicate (an
    `exists real` read opaquely) asked of arguments that the path leaves equal, argument by
    argument.  z3 finds that by itself only by guessing the equalities: on a path that adds
    an entry to a map and clears it away again (the map after is the map before), with 258
    arguments, it gave up after 60 s; asked whether one of 24 arguments can differ, it
    answers in 1 to 2 s.  An argument that can differ ends it: False decides nothing, and
    the usual tiers follow."""
    if not (z3.is_app(old) and z3.is_app(new) and old.num_args() > 0
            and old.decl().kind() == z3.Z3_OP_UNINTERPRETED and old.decl().eq(new.decl())):
        return False
    pairs = [(a, b) for a, b in zip(old.children(), new.children()) if not a.eq(b)]

    def differ(group) -> bool | None:
        """Whether one argument of the group can differ (None: z3 gave up)."""
        goal = z3.Or([a != b for a, b in group])
        try:
            return terms.check_assume(local, z3.And(guard, goal, *nearby.near(
                z3.And(guard, goal), conj, readers, candidates, memo))) is not None
        except Unknown:
            return None
    with terms.time_limit(local, min(CONGRUENCE_MS, local_ms), local_ms):
        for at in range(0, len(pairs), CONGRUENCE_GROUP):
            group = pairs[at:at + CONGRUENCE_GROUP]
            verdict = differ(group)
            if verdict is None and len(group) > 1:
                # Together too much: one at a time.
                if any(differ([p]) is not False for p in group):
                    return False
            elif verdict is not False:
                return False
    return True

