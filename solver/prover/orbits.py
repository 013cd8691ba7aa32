"""Symmetry orchestration of the step: the paths that are images of earlier ones under the
board's symmetries (`symmetry`), or of the first case's with the players numbered anew
(`symmetry.Rotation`), are settled by z3 showing they follow from those, not proved again."""
from __future__ import annotations

import time

from ..engine import domains as dz
from ..engine.game import Game
from . import symmetry
from .options import PROGRESS_S

# A path whose orbit's first took less than this (s, the action's mean) is proved itself: a
# symmetry check costs 0.2-0.8 s on 8 x 8.
MIRROR_MIN_S = 0.5
# An action is not mirrored further once MIRROR_MISSES of its images have been tried and its
# checks have cost more a path they settled than proving a path does (`worth_mirroring`): a rule
# that is not symmetric (no image follows), one that favours one player (each miss may run to
# the check's time limit, symmetry.CHECK_MS), or images that follow but slowly (on a 3x3 board,
# an action whose mean proof time crossed MIRROR_MIN_S on a slow run had 60 images follow at
# 1.7 s each, where a proof took 0.45 s: the proof took twice as long; docs/prover.md).  When
# what a proof of it costs is not known: once MIRROR_MISSES images missed, more of them than
# followed (on 8 x 8 an action of 4,032 paths a case whose first image followed, then missed
# at 10-15 s an image).
MIRROR_MISSES = 3
# An action's checks may cost up to this many times what proving the paths they settled would
# have (`worth_mirroring`).
MIRROR_SPEND = 1.0


def mirrored(symmetric, key, work: list, later: list, orbs: dict, assumed: list,
             bounds: list, note, say, costs=None, source: str = "") -> list[int]:
    """Which paths of ``later`` (an iterable of (index, (path, goal))) do not follow by a
    symmetry from the first path of their orbit (proved this round, or by a previous run): to be
    proved themselves.  ``work[at]`` is (path, goal) too, its goal without the properties some
    path broke (or z3 gave up on): the others held on every path checked, so on each orbit's
    first; ``assumed``: what the proofs assumed.  ``note(at, path, symmetry, from)`` hears of
    each path that follows.  ``costs``: what a path of each action costs to prove (s, a mean):
    an action under MIRROR_MIN_S is proved, not mirrored, and so is one whose checks have cost
    more than the proofs of the paths they settled, once MIRROR_MISSES of its images were tried
    (`worth_mirroring`).  With ``source`` (what ``work`` is: another case's paths, all of them
    settled), a path may follow from any path of ``work``, not only from the first of an orbit."""
    rest = []
    settled = 0
    t0 = time.perf_counter()
    costs = costs or {}
    misses: dict = {}       # action -> [followed, did not, seconds]
    said = t0
    tried = 0
    for tried, (at, (b, goal)) in enumerate(later, 1):
        if time.perf_counter() - said > PROGRESS_S:
            said = time.perf_counter()
            say(f"{key[0]}: {tried - 1} images tried, {settled} of them settled "
                f"({said - t0:.0f} s)")
        hits = misses.setdefault(b.action, [0, 0, 0.0])
        if not worth_mirroring(hits, costs.get(b.action)):
            rest.append(at)
            continue
        t_at = time.perf_counter()
        guard = dz.lift(b.guard)
        for at0, sym in orbs[at]:
            if (not source and at0 in orbs) or not symmetric.holds_of(key, sym, bounds,
                                                                      assumed):
                continue
            b0, goal0 = work[at0]
            if sym.follows(bounds, guard, goal, dz.lift(b0.guard), goal0):
                settled += 1
                hits[0] += 1
                if note is not None:
                    note(at, b, sym, at0)
                break
        else:
            hits[1] += 1
            rest.append(at)
        hits[2] += time.perf_counter() - t_at
    say(f"{key[0]}: {settled} of {tried} paths follow by a symmetry "
        + (f"from {source}" if source else "of the board from the first of their orbit")
        + f" ({time.perf_counter() - t0:.1f} s); {len(rest)} to prove")
    return rest


def worth_mirroring(hits: list, cost: float | None) -> bool:
    """Whether the next image of an action is checked against its orbit's first, from what
    its images so far gave, ``hits`` ([followed, missed, seconds the checks took]), and what a
    proof of one of its paths costs, ``cost`` (s, a mean; None when not known)."""
    followed, missed, spent = hits
    if cost is None:
        return not (missed >= MIRROR_MISSES and (not followed or missed > followed))
    if cost < MIRROR_MIN_S:
        return False
    return followed + missed < MIRROR_MISSES or (
        followed > 0 and spent <= MIRROR_SPEND * cost * followed)


def rotate_from_first(symmetric, key: str, ci: int, fields: list, first: tuple, here: tuple,
                      paths: list, assumed: tuple, bounds: list, note, say,
                      costs=None) -> list:
    """``paths`` of case ``ci`` of a pass (``key``) but those that follow from the first
    case's path of the same action and parameters, the players numbered from this case's
    actor (`symmetry.Rotation`).  ``first`` and ``here``: each case's state, its paths and
    their `Goals`; ``assumed``: the conjuncts each case assumes."""
    (S0, bs0, goals0), (S, bs, goals) = first, here
    rot = symmetric.rotation(ci, fields, S0, S, assumed[0])
    if rot is None:
        return paths
    # A path is named by its action, its parameters and, when the move hands the turn to a
    # player (`splits.split_after`), that player numbered back.
    firsts = {k: at0 for at0, k in enumerate(_rotation_keys(bs0, fields[0], 0, rot.n))}
    keys = _rotation_keys(bs, fields[0], ci, rot.n)
    orbs = {at: [(firsts[keys[at]], rot)] for at, _ in paths if keys[at] in firsts}
    if not orbs:
        return paths
    rest = set(mirrored(symmetric, (key, ci), goals0,
                        [(at, goals[at]) for at in sorted(orbs)], orbs, assumed[1], bounds,
                        note, say, costs, source="the first case's, the players numbered anew"))
    return [(at, x) for at, x in paths if at not in orbs or at in rest]


def proof_costs(journal, ci: int, work: list, candidates, timings: list) -> dict:
    """What a path of each action of case ``ci`` costs to prove (s, a mean): the paths a
    previous run proved (``journal``) and this run's ``timings`` (action -> [paths, s])."""
    spent: dict = {} if journal is None else \
        journal.spent(ci, [b.action for b, _, _ in work], candidates)
    for tm in timings:
        for a, (x, s_) in tm.items():
            t_ = spent.setdefault(a, [0, 0.0])
            t_[0] += x
            t_[1] += s_
    return {a: s_ / x for a, (x, s_) in spent.items() if x}


def _rotation_keys(bs: list, field: int, r: int, n: int) -> list:
    """`symmetry.keys_of` of the paths ``bs`` with the actor after each (the player its path
    hands the turn to, numbered back by ``r``; None when it is a term)."""
    def after(b):
        v = b.state[field]
        return (v - r) % n if isinstance(v, int) else None
    return symmetry.keys_of(bs, after)


class Goals:
    """``work[at]`` as (path, goal), made when first asked for."""

    def __init__(self, work: list, goal_of):
        self.work, self.goal_of, self.made = work, goal_of, {}

    def __getitem__(self, at: int):
        hit = self.made.get(at)
        if hit is None:
            hit = self.made[at] = self.goal_of(self.work[at])
        return hit


class Symmetric:
    """The board's symmetries for `prove`'s step (`symmetry`): per case, the symmetries
    over its symbolic state, the orbits of its paths, and whether the assumed invariants
    hold of each symmetry's image (per set of candidates)."""

    def __init__(self, game: Game, say):
        self.game = game
        self.say = say
        self._groups: dict = {}
        self._holds: dict = {}
        self._rotations: dict = {}

    def orbits(self, ci, S, bs: list) -> dict:
        syms = self._groups.get(ci)
        if syms is None:
            syms, why = symmetry.group(self.game, S)
            self._groups[ci] = syms
            if why:
                self.say(f"symmetry: none used: {why}")
        if not syms:
            return {}
        return symmetry.orbits(self.game, syms, symmetry.keys_of(bs))

    def rotation(self, ci: int, fields: list, S0, S, assumed0: list):
        """The players' rotation from the first case to case ``ci`` (`symmetry.Rotation`):
        when the spec declares `rotate`, the cases are the actor's alone, and the actor is
        a `rotate` field numbering the cases from 0; else None."""
        rot = self.game.p.rotate
        t = self.game.state_type
        if rot is None or len(fields) != 1 or t.fields[fields[0]][0] not in rot.fields \
                or S[fields[0]] != ci or S0[fields[0]] != 0:
            return None
        key = (ci, tuple(c.get_id() for c in assumed0))
        hit = self._rotations.get(key)
        if hit is None:
            hit = self._rotations[key] = symmetry.Rotation(self.game, ci, S0, S, assumed0)
        return hit

    def holds_of(self, ci, sym, bounds: list, assumed: list) -> bool:
        key = (ci, sym.name, len(assumed), tuple(c.get_id() for c in assumed))
        ok = self._holds.get(key)
        if ok is None:
            ok = self._holds[key] = sym.holds_of(bounds, assumed)
            if not ok:
                self.say(f"symmetry: the {sym.name} does not map the assumed invariants "
                         f"onto themselves ({ci[0]}, case {ci[1] + 1}): not used")
        return ok

