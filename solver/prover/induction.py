"""The inductive step of the state invariants, by Houdini's fixpoint: every candidate assumed
of a symbolic state, each action path from it checked (`tiers`), the candidates a path breaks
dropped, until the rest is inductive together."""
from __future__ import annotations

import time

import z3

from ..engine import domains as dz
from ..engine.game import Game
from ..engine.symbolic import Unknown, make_solver, substitution
from ..lang import ir
from . import nearby, orbits, splits, terms, tiers
from .options import COARSE, GAVE_UP, PROGRESS_S, ProveOptions, gave_up_why

# A path's guard is first checked against the candidates' conjuncts that read no more than
# this many variables (a phase that no reachable state is in) ...
VACUITY_VARS = 8
# ... within this long (ms); giving up decides nothing.  An action none of whose first
# VACUITY_MISSES paths was vacuous is not asked about again (most actions are possible).
VACUITY_MS = 500
VACUITY_MISSES = 3
# With a journal or a store, a candidate z3 gave up on (or broke only on a path whose fixpoint
# was cut short, `COARSE`) is still checked on the later paths (a time-out may say more of the
# machine's load than of the rules), but on at most this many of one action's paths in a case
# and round: past that, the action's paths cannot all hold in this pass, and each more path
# cost its whole time-out to learn nothing (20 to 28 s a path, about 60 paths a case, 16 cases,
# for a verdict known after two: docs/prover.md).  The paths not asked are not recorded, so a
# later run asks them.
GAVE_UP_MISSES = 2


# The shares of an action's instances a case built in the parent is built in (`houdini`,
# with Dask workers): the engine is asked between two whether the rest goes to the workers.
LOCAL_PARTS = 8


def houdini(game: Game, invs: list[ir.Invariant], options: ProveOptions, say, journal=None,
            symmetric=None, tally=None, engine=None):
    """Houdini: assume every candidate, check each action path, drop the candidates that a
    path breaks, and repeat until none is dropped; the survivors are inductive together.
    Return their names and, for each candidate that fell, why.

    A path changes few leaves, so after substitution most conjuncts are the very same term as
    before (and hold by assumption).  Only changed conjuncts are checked: first from their own
    previous versions alone, then, if that is not enough, from every assumption.  A
    `journal.Journal` records each path once checked, and gives back those a
    previous run checked; ``symmetric`` (an `orbits.Symmetric`): the paths that follow by a
    symmetry from others are not proved again.  ``tally`` (a `result.Tally`), if given, is
    kept up to date with the round and the paths checked in it, for a caller stopped
    part-way.  ``engine`` (a `cluster.Engine`): a round's paths are Dask tasks instead, each
    worker building the cases again (`Step`)."""
    timeout_ms, split = options.step_timeout_ms, options.split_lengths
    from .result import Tally
    tally = tally if tally is not None else Tally()
    step = Step(game, invs, options, say, tally)
    fresh, fields, cases, order, local = step.fresh, step.fields, step.cases, step.order, \
        step.local
    if engine is not None:
        run_ = engine.run(options, [i.name for i in invs])
    candidates = [i.name for i in invs]
    plans: dict = {}        # case -> the shares of its actions the workers built
    ahead: dict = {}        # case -> its plan's tasks, submitted while the previous case ran

    def prefetch(cj: int) -> None:
        # The next case's paths built on the workers that have no check of this one left.
        if cj >= len(cases) or cj in ahead:
            return
        S_j, _, _, _, _, falsified_j, _, _, built_j = cases[cj]
        if falsified_j & set(candidates):
            return
        held_j = {} if journal is None else journal.decided_groups(cj, order, candidates)
        want_j = [a for a in order if a not in held_j and a not in built_j]
        if want_j:
            ahead[cj] = engine.plan_ahead(run_, "induction", cj, game, S_j, want_j)
    ctis: dict[str, str] = {}
    split_memo: dict = {}
    learned: set = set()      # (action, invariant) whose steps needed splitting
    tally.stage, tally.round = "induction", 0
    while True:
        dropped: set[str] = set()
        timing: dict = {}
        tally.round, tally.done = tally.round + 1, 0
        tally.total = sum(len(c[2]) for c in cases)
        # A case whose checks went to the workers is closed once the next case's checks are
        # sent too: a worker done with its share of a case goes on to the next while the
        # other finishes (the candidates are the round's, whichever case breaks one first,
        # and the cases close in order): its tasks (`cluster.Sent`), results, and closing.
        unclosed: list = []
        try:
            for ci, (S, conj, work, readers_of, lengths, falsified, build, small, built) \
                    in enumerate(cases):
                if falsified & set(candidates):
                    continue
                # The actions whose every path a previous run decided under these candidates:
                # not built (a large case took minutes to build), their verdicts reused.
                held = {} if journal is None else journal.decided_groups(ci, order, candidates)
                whole = sum(map(len, held.values())) if len(held) == len(order) and not any(
                    fell for v in held.values() for fell in v) else \
                    None if work or journal is None else journal.case_done(ci, candidates)
                if whole is not None:
                    say(f"induction: case {ci + 1} of {len(cases)}: every path checked by a "
                        f"previous run ({journal.label})")
                    tally.count(whole, whole)
                    continue
                # Only the actions not decided before are built, under a symmetry too: a
                # symmetry maps a path onto one of the same action (its squares mirrored), so
                # an orbit lies within the action's paths.
                # With the paths going to Dask workers, they are built there, never here.
                lazy = engine is not None and symmetric is None and engine.remote()
                if not lazy and engine is not None and symmetric is None and engine.workers > 1:
                    # Built here an action at a time while the proof is young: once it has run
                    # LOCAL_S, the whole case is built on the workers, in shares, each once, the
                    # actions built here too (the workers check them, and a path cannot be sent:
                    # each worker would build again, whole, every action it is sent a path of).
                    # An action is built in shares of its instances, the engine asked between
                    # them: one action took 3.7 s to build, and what is built here is dropped.
                    here = []
                    for a in order:
                        if a in held or a in built:
                            continue
                        n = splits.instance_count(game, S, a)
                        m = max(1, min(n, LOCAL_PARTS))
                        shares = []
                        for k in range(m):
                            shares.append(build({a}, (n * k // m, n * (k + 1) // m)))
                            if engine.remote():
                                lazy = True
                                break
                        if lazy:
                            for b in here:
                                tally.built -= len(built.pop(b))
                            break
                        built[a] = [x for share in shares for x in share]
                        tally.built += len(built[a])
                        here.append(a)
                if lazy:
                    planned = _planned(engine, run_, game, S, ci, order, held, built,
                                       plans, tally, ahead.pop(ci, None))
                    if planned:
                        say(f"induction: {planned} action paths, {len(candidates)} candidate "
                            "invariants, built on the workers"
                            + (f" (case {ci + 1} of {len(cases)})" if len(cases) > 1 else ""))
                    work[:] = [x for a in order for x in built.get(a, ())]
                else:
                    work[:] = build({a for a in order if a not in held})
                unbuilt = sum(len(v) for a, v in held.items() if a not in built)
                tally.count(unbuilt, unbuilt)
                # Each path's place among the case's paths, built or not (an action is either),
                # for telling why a candidate fell on the first path that breaks it.
                offset: dict[str, int] = {}
                place: list[int] = []           # a built path's number in `work` -> its place
                at_ = 0
                for a in order:
                    offset[a] = at_
                    n_a = len(built[a]) if a in built else len(held.get(a, ()))
                    if a in built:
                        place.extend(range(at_, at_ + n_a))
                    at_ += n_a
                tally.total = sum(len(c[2]) for c in cases) + unbuilt
                checked_before = tally.checked

                def check_paths(paths, S=S, conj=conj, readers_of=readers_of,
                                lengths=lengths, ci=ci, small=small):
                    note = None if journal is None else \
                        (lambda at, b, why, skipped, took: journal.record(
                            ci, at, b.action, candidates, why, skipped, seconds=took))
                    return _check_paths(game, S, paths, local, conj, readers_of, candidates,
                                        lengths, (split_memo, learned, split), timeout_ms, say,
                                        note, small, tally)
                paths = [(at, x) for at, x in enumerate(work) if x[0].action not in held]
                results = []
                # The verdicts of the decided groups, by their place in the case.
                decided: dict[str, tuple] = {}
                for a, verdicts in held.items():
                    for k, fell in enumerate(verdicts):
                        for n, w in fell.items():
                            decided[n] = min(decided.get(n, (offset[a] + k, w)),
                                             (offset[a] + k, w))
                if decided:
                    results.append((set(decided), {}, {}, set()))
                if journal is not None:
                    # Paths a previous run checked under these very candidates: their verdicts.
                    done = journal.checked(ci, [b.action for b, _, _ in work], candidates)
                    if done:
                        say(f"induction: {len(done)} of {len(paths)} paths checked by a previous "
                            f"run ({journal.label})")
                        why: dict[str, tuple] = {}
                        for at, fell in done.items():
                            for n, w in fell.items():
                                why[n] = min(why.get(n, (at, w)), (at, w))
                        results.append((set(why), why, {}, set()))
                        paths = [(at, x) for at, x in paths if at not in done]
                reused = len(work) - len(paths)
                tally.count(reused, reused)
                if symmetric is not None and ci > 0 and paths \
                        and not cases[0][5] & set(candidates):
                    # The players numbered from this case's actor: most paths follow from the
                    # first case's, all of them settled by now (this round or a previous run).
                    fell_here = set().union(*(d for d, *_ in results))
                    paths = _rotated(symmetric, cases, ci, fields, work, paths, candidates,
                                     dropped | fell_here, fresh.constraints, journal, say, timing)
                later: list = []
                if symmetric is not None:
                    # The images of earlier paths under the board's symmetries wait: once the
                    # first of each orbit is proved, most follow from it (`orbits.mirrored`).
                    orbs = symmetric.orbits(("induction", ci), S, [b for b, _, _ in work])
                    later = [(at, x) for at, x in paths if at in orbs]
                    paths = [(at, x) for at, x in paths if at not in orbs]

                def run(paths, ci=ci, built=built, lazy=lazy):
                    if lazy:
                        return engine.induction(
                            run_, ci, candidates, by_action(paths, work, lambda x: x[0]),
                            journal, tally, say, plans.get(ci), learned,
                            lambda: prefetch(ci + 1), wait=False) if paths else None
                    if engine is not None:
                        rest = engine.ahead(paths, lambda part: results.append(check_paths(part)))
                        if rest:
                            results.extend(engine.induction(
                                run_, ci, candidates, by_action(rest, work, lambda x: x[0]),
                                journal, tally, say, then=lambda: prefetch(ci + 1)))
                    else:
                        results.append(check_paths(paths))
                    return None
                sent = run(paths)
                if later:
                    fell = set().union(*(d for d, *_ in results))
                    targets = [n for n in candidates if n not in fell]
                    # What each action's proofs cost: this run's, and a previous run's (the
                    # paths it proved are not proved again).
                    costs = orbits.proof_costs(journal, ci, work, candidates,
                                   [tm for _, _, tm, _ in results])

                    def goal_of(x, targets=targets):
                        return (x[0], [c2 for n, _, c2 in x[1] if n in targets])

                    def note(at, b, sym, at0, ci=ci, fell=fell):
                        if journal is not None:
                            journal.record(ci, at, b.action, candidates, {}, sorted(fell),
                                           f"{sym.name} of path {at0}")
                    goals = orbits.Goals(work, goal_of)
                    rest = orbits.mirrored(symmetric, ("induction", ci), goals,
                                           [(at, goals[at]) for at, _ in later], orbs,
                                           [c for n in candidates for c in conj[n]],
                                           fresh.constraints, note, say, costs)
                    if rest:
                        run([(at, work[at]) for at in rest])
                def close(counted=None, ci=ci, results=results, decided=decided, place=place,
                          work=work, built=built, held=held, reused=reused,
                          checked_before=checked_before, dropped=dropped, timing=timing):
                    # Why a candidate fell: on the first path that breaks it, as one process
                    # would say.
                    first: dict[str, tuple] = dict(decided)
                    for d, c, tm, lr in results:
                        dropped.update(d)
                        for n, (at, w) in c.items():
                            first[n] = min(first.get(n, (place[at], w)), (place[at], w))
                        for a, (x, s_) in tm.items():
                            t_ = timing.setdefault(a, [0, 0.0])
                            t_[0] += x
                            t_[1] += s_
                        learned.update(lr)
                    for n, (_, why) in sorted(first.items()):
                        ctis.setdefault(n, why)
                    if journal is not None and not any(d for d, *_ in results):
                        journal.record_case(ci, candidates, len(work))
                    if journal is not None:
                        journal.record_groups(ci, {a: len(built[a]) for a in built
                                                   if a not in held}, candidates)
                    # The paths a symmetry settled count as checked (the case is done); on
                    # the workers, those that this case's tasks counted as they came back,
                    # whatever the next case's counted meanwhile.
                    tally.settled(len(work) - reused - (tally.checked - checked_before
                                                        if counted is None else counted))
                # This case waits among the unclosed before the last one is closed (a
                # Ctrl-C meanwhile keeps what came back of both).
                if lazy:
                    unclosed.append((sent, results, close))
                while len(unclosed) > (1 if lazy else 0):
                    _finish(*unclosed.pop(0))
                if not lazy:
                    close()
            while unclosed:
                _finish(*unclosed.pop(0))
        except BaseException:
            # Ctrl-C: what came back of a case still waiting is kept in the store too.
            for sent, _, _ in unclosed:
                if sent is not None:
                    sent.abandon()
            raise
        say("induction: checked " + ", ".join(f"{a} ({n} paths, {s_:.1f} s)"
                                                for a, (n, s_) in timing.items()))
        if not dropped:
            return set(candidates), ctis
        say(f"induction: not inductive: {', '.join(sorted(dropped))}; retrying the rest")
        candidates = [n for n in candidates if n not in dropped]


def _finish(sent, results: list, close) -> None:
    """A case of `houdini` closed: its workers' results (``sent``, a `cluster.Sent`, or None)
    waited for and added to ``results``, then ``close(the paths they counted)``."""
    if sent is not None:
        results.extend(sent.wait())
    close(0 if sent is None else sent.counted)


class Step:
    """The cases of the inductive step for the candidates ``invs`` under ``options``: each
    case's symbolic state, its candidates' conjuncts and what builds its action paths (each
    action's once, when first asked for), and the solver that checks them.  Made once per
    process: by `houdini`, and by each Dask worker for the paths it is sent
    (`check_share`), the same cases and the same paths in the same order, since nothing z3
    makes can be sent between processes."""

    def __init__(self, game: Game, invs: list[ir.Invariant], options: ProveOptions, say,
                 tally=None):
        self.game, self.options, self.say = game, options, say
        t = game.state_type
        self.fresh = fresh = dz.Fresh("s_")
        self.cases = cases = []
        self.fields = fields = splits.split_fields(game, options.split_on)
        reads_actor = {i.name: any(splits.reads_field(i.expr, f) for f in fields)
                       for i in invs}
        all_cases = splits.cases(game, fresh, "s", fields)
        self.order = order = [a.name for a in game.actions]
        # A worker's memos of the length splits (`_check_paths`), kept from share to share.
        self.split_memo: dict = {}
        self.learned: set = set()
        self._memos: dict = {}      # (case, candidates) -> `_check_paths`'s memos
        def _prepared(b, S, conj, readers, reads, lengths):
            """Path ``b`` of the case from ``S``, as a round checks it: (path, the candidates'
            conjuncts it changes as (name, index, conjunct after), the sequence lengths it
            moves)."""
            subst = substitution(t, S, b.state)
            pairs = {a.get_id(): (a, v) for a, v in subst if dz.is_sym(a)}
            touched = {nk for i in pairs for nk in readers.get(i, ())}
            changed = []
            moved = any(not dz.is_sym(a) for a, _ in subst)
            if moved:
                # A split field (the actor) changed: an invariant that reads it is
                # evaluated afresh.
                for inv in invs:
                    if reads_actor[inv.name]:
                        new = terms.conjuncts(game.holds_symbolic(inv, b.state))
                        changed.extend((inv.name, k, c2) for k, c2 in enumerate(new))
                        touched -= {(inv.name, k) for k in range(len(conj[inv.name]))}
            for n, k in sorted(touched):
                c = conj[n][k]
                mine = [pairs[i] for i in reads[(n, k)] if i in pairs]
                c2 = terms.substitute(c, mine)
                if not c2.eq(c):
                    changed.append((n, k, c2))
            return (b, changed, {i for i in pairs if i in lengths})

        for ci, S in enumerate(all_cases):
            lengths = splits.seq_lengths(S)
            conj = {i.name: terms.conjuncts(game.holds_symbolic(i, S)) for i in invs}
            # A case whose split fields already falsify a candidate (a phase no move enters) is
            # assumed away while that candidate stands: its paths are built only if it falls.
            falsified = {n for n, cs in conj.items() if any(z3.is_false(c) for c in cs)}
            memo: dict[int, tuple] = {}
            readers, reads = nearby.conjunct_readers(conj, memo)
            small = [nk for nk, fv in reads.items() if len(fv) <= VACUITY_VARS]
            built: dict[str, list] = {}     # action -> its paths, once built (maybe none)
            parted: dict[tuple, list] = {}  # (action, lo, hi) -> a share of its paths

            def build(only=None, part=None, S=S, conj=conj, readers=readers, reads=reads,
                      lengths=lengths, ci=ci, built=built, parted=parted):
                # Each action's paths once (an action of no path is not built again), those of
                # ``only`` (a set of action names) or of every action; the case's list of paths
                # (each action's together, in the game's order) is returned whole.  With
                # ``part`` (lo, hi) and one action in ``only``: the paths of its instances lo
                # to hi - 1 only (`splits.paths`), kept apart and returned alone.
                if part is not None:
                    (a,) = only
                    key = (a, *part)
                    if key not in parted:
                        parted[key] = [_prepared(b, S, conj, readers, reads, lengths)
                                       for b in splits.paths(game, S, fields, {a}, part)]
                    return parted[key]
                want = {a for a in order if (only is None or a in only) and a not in built}
                if want:
                    bs = splits.paths(game, S, fields, want)
                    say(f"induction: {len(bs)} action paths"
                        + (f" of {len(want)} of {len(order)} actions" if len(want) < len(order)
                           else "") + f", {len(invs)} candidate invariants"
                        + (f" (case {ci + 1} of {len(all_cases)})" if len(all_cases) > 1
                           else ""))
                    for a in want:
                        built[a] = []
                    for b in bs:
                        built[b.action].append(_prepared(b, S, conj, readers, reads, lengths))
                    if tally is not None:
                        tally.built += len(bs)
                return [x for a in order for x in built.get(a, ())]
            cases.append((S, conj, [], readers, lengths, falsified, build, small, built))
        # z3's solver for linear integer arithmetic, not its general one: on the same
        # queries (uninterpreted predicates beside the arithmetic) the general solver
        # decided 42 paths of a stored proof in 200 s where this one decided 1,023, and
        # about as many elsewhere (bench/README.md, "The inductive step's solver").
        self.local = make_solver(options.step_timeout_ms,
                                 abstraction=game.symbolic.abstraction,
                                 sides=game.symbolic.sides)
        self.local.add(*fresh.constraints)

    def build_action(self, ci: int, action: str, part: tuple) -> int:
        """The number of paths of ``action``'s instances ``part`` (lo, hi) in case ``ci``,
        built here for the shares to come (`cluster.Engine.plan`)."""
        return len(self.cases[ci][6]({action}, part))

    def _path(self, ci: int, item: tuple):
        """The path of a share's ``item``: (place, action, place among the action's paths)
        or, of an action built in parts on the workers, (..., part, place in the part)."""
        build, built = self.cases[ci][6], self.cases[ci][8]
        if len(item) > 3 and item[3] is not None:
            return build({item[1]}, item[3])[item[4]]
        if item[1] not in built:
            build({item[1]})
        return built[item[1]][item[2]]

    def check_share(self, ci: int, candidates: list, items: list, journaled: bool,
                    learned=()) -> tuple:
        """What a Dask worker sends back for the paths ``items`` of case ``ci`` under
        ``candidates``, each (its place among the parent's paths of the case, its action, its
        place among the action's paths; `by_action`), only their actions built here:
        `_check_paths`'s verdicts, and the records for the parent's journal or store,
        (place, action, why, skipped, seconds) each, when ``journaled`` (without one, a
        candidate z3 gave up on falls, as in one process).  ``learned``: the (action,
        invariant) pairs the proof has found to need splitting (on other workers too), added
        to this worker's."""
        self.learned |= set(map(tuple, learned))
        S, conj, _, readers_of, lengths, _, build, small, built = self.cases[ci]
        records: list = []
        note = (lambda at, b, why, skipped, took: records.append(
            (at, b.action, why, skipped, took))) if journaled else None
        # One process checks a case's paths in one call, its memos kept throughout: a
        # worker keeps them over the shares of one case and round it is sent.
        key = (ci, tuple(candidates))
        if key not in self._memos:
            self._memos = {key: ({}, {})}
        out = _check_paths(self.game, S, [(it[0], self._path(ci, it)) for it in items],
                           self.local,
                           conj, readers_of, candidates, lengths,
                           (self.split_memo, self.learned, self.options.split_lengths),
                           self.options.step_timeout_ms, self.say, note, small,
                           memos=self._memos[key])
        return out, records


class Unbuilt:
    """A path built on a Dask worker only: the parent knows its action and its place."""

    __slots__ = ("action",)

    def __init__(self, action: str):
        self.action = action


def _planned(engine, run, game: Game, S, ci: int, order: list, held: dict,
             built: dict, plans: dict, tally, ahead=None) -> int:
    """The paths of case ``ci``'s (state ``S``) actions neither ``held`` nor built yet, built
    on the workers in shares (`cluster.Engine.plan`) and entered into ``built`` as
    placeholders (`Unbuilt`, in the shape of the case's items); each action's shares in
    ``plans``.  ``ahead``: the plan's tasks submitted before (`Engine.plan_ahead`), used
    when they build the same actions (a case of the inductive step is never impossible).
    How many paths they have."""
    want = [a for a in order if a not in held and a not in built]
    if not want:
        return 0
    parts = engine.planned(ahead) if ahead is not None and ahead[0] == tuple(want) else \
        engine.plan(run, "induction", ci, game, S, want)
    for a in want:
        stub = (Unbuilt(a), (), set())
        built[a] = [stub] * sum(n for _, n, _ in parts[a])
    plans.setdefault(ci, {}).update(parts)
    n = sum(len(built[a]) for a in want)
    if tally is not None:
        tally.built += n
    return n


def by_action(paths: list, work: list, path_of) -> list[tuple]:
    """``paths`` ((place, item) pairs of ``work``, whose items come each action's together)
    as (place, action, place among the action's items): what a Dask worker, which builds
    only the actions it is sent, finds them by."""
    start: dict = {}
    for i, x in enumerate(work):
        start.setdefault(path_of(x).action, i)
    return [(at, path_of(x).action, at - start[path_of(x).action]) for at, x in paths]


def _rotated(symmetric, cases: list, ci: int, fields: list, work: list, paths: list,
             candidates: list, fell: set, bounds: list, journal, say, timing: dict) -> list:
    """``paths`` (of case ``ci``) but those that follow from the first case's path of the
    same action and parameters with the players numbered from this case's actor (the spec's
    `rotate`, `symmetry.Rotation`); ``fell``: the candidates fallen so far this round (left
    out of the goals)."""
    S0, conj0, w0, *_ = cases[0]
    build0 = cases[0][6]
    S, conj = cases[ci][0], cases[ci][1]
    if symmetric.rotation(ci, fields, S0, S, [c for n in candidates for c in conj0[n]]) \
            is None:
        return paths
    # The first case's paths of this case's actions (those of the others are not needed: a
    # rotation maps a path onto one of the same action).
    w0[:] = build0({b.action for b, _, _ in work})
    targets = [n for n in candidates if n not in fell]

    def goal_of(x, targets=targets):
        return (x[0], [c2 for n, _, c2 in x[1] if n in targets])

    def note(at, b, sym, at0):
        if journal is not None:
            journal.record(ci, at, b.action, candidates, {}, sorted(fell),
                           f"{sym.name} of case 1 path {at0}")
    # What each action's proofs cost (the first case's, as this run and the journal say).
    costs = orbits.proof_costs(journal, 0, w0, candidates, [timing])
    return orbits.rotate_from_first(
        symmetric, "induction", ci, fields, (S0, [b for b, _, _ in w0], orbits.Goals(w0, goal_of)),
        (S, [b for b, _, _ in work], orbits.Goals(work, goal_of)), paths,
        ([c for n in candidates for c in conj0[n]], [c for n in candidates for c in conj[n]]),
        bounds, note, say, costs)


def _check_paths(game, S, work, local, conj, readers_of, candidates, lengths, split, timeout_ms,
                 say, note=None, small=(), tally=None, memos=None):
    """One Houdini round over some action paths of one case: the candidates a path breaks
    (or z3 gives up on), why, the time per action, and the (action, invariant) pairs that
    needed length splitting (or, without it, taking one conjunct at a time).  ``work`` holds
    (index, path) pairs; each reason comes with the index of the path that gave it.
    ``split`` is (split_memo, learned, whether to split lengths).  ``note(at,
    path, fell, skipped)``, if given, hears of each path z3 decided (no time-out), with the
    candidates it broke and why, and those it did not check (fallen on an earlier path).
    With ``note``, a candidate z3 gave up on is still checked on the later paths: a time-out
    depends on the machine's load, and a run that resumes from the journal then retries that
    path alone, not every path after it.
    ``small``: the (name, index) of the conjuncts that `_vacuous` tries a guard against.
    ``tally`` counts the paths checked (`result.Tally`).  ``memos``: the free-variable memo
    and the vacuity counts to go on with (a Dask worker's, over the shares it is sent of one
    case and round); fresh ones by default."""
    dropped: set[str] = set()
    unsure: set[str] = set()          # z3 gave up on them (still checked, with a journal)
    ctis: dict[str, str] = {}
    timing: dict = {}
    memo, vacuity = memos if memos is not None else ({}, {})
    learned = split[1]
    # vacuity: action -> [paths found vacuous, paths not]
    # The candidates are those of this round for every path: their small conjuncts, once.
    small_now = [conj[n][k] for n, k in small if n in candidates]
    said = time.perf_counter()
    for at, (b, changed, moved_lengths) in work:
        say("induction: action paths checked", done=tally.done if tally else 0,
            total=tally.total if tally else None, note=f"checking {b.action}")
        t_b = time.perf_counter()
        skipped = sorted(dropped)         # fallen already: not checked on this path
        gave_up = False
        by_inv: dict[str, list] = {}
        for n, k, c2 in changed:
            if n in candidates and n not in dropped:
                by_inv.setdefault(n, []).append((k, c2))
        guard = dz.lift(b.guard)
        hits = vacuity.setdefault(b.action, [0, 0])
        if by_inv and (hits[0] or hits[1] < VACUITY_MISSES):
            if _vacuous(local, guard, small_now, timeout_ms):
                hits[0] += 1
                by_inv = {}
            else:
                hits[1] += 1
        for n, items in by_inv.items():
            goal = z3.Not(z3.And([c2 for _, c2 in items]))
            misses = ("gave up", b.action, n)
            try:
                if memo.get(misses, 0) >= GAVE_UP_MISSES:
                    raise Unknown("not asked: z3 gave up on this action's other paths")
                # Every candidate at once is too much for z3 on real specs: what the two
                # local tiers cannot prove goes to bounded model checking.
                verdict = tiers.step_each(local, guard, goal, conj, n, items, readers_of,
                                     candidates, memo,
                                     (lengths if split[2] else None, moved_lengths,
                                      split[0], learned, (b.action, n)),
                                     timeout_ms)
            except Unknown:
                verdict = GAVE_UP
            if verdict is not None and b.approx:
                verdict = COARSE
            if verdict is GAVE_UP or verdict is COARSE:
                memo[misses] = memo.get(misses, 0) + 1
                (unsure if note is not None else dropped).add(n)
                gave_up = True
                ctis.setdefault(n, (at, gave_up_why(b.action, timeout_ms, verdict is COARSE)))
                continue
            if verdict is not None:
                dropped.add(n)
                # Over a time-out on an earlier path (with a journal): this path's record
                # must say that it breaks the candidate.
                ctis[n] = (at, "not provable from the invariants it shares variables "
                               "with: " + terms.describe_cti(game, b, verdict, S))
        tm = timing.setdefault(b.action, [0, 0.0])
        tm[0] += 1
        tm[1] += time.perf_counter() - t_b
        if note is not None and not gave_up:
            # A time-out depends on the machine's load: such a path is checked again.
            note(at, b, {n: why for n, (a2, why) in ctis.items() if a2 == at}, skipped,
                 time.perf_counter() - t_b)
        if tally is not None:
            tally.add()
        done = sum(x for x, _ in timing.values())
        if time.perf_counter() - said > PROGRESS_S:
            said = time.perf_counter()
            say(f"induction: {done} paths checked ("
                + ", ".join(f"{a} {x}: {s_:.0f} s" for a, (x, s_) in timing.items()) + ")")
    return dropped | unsure, ctis, timing, set(learned)


def _vacuous(local, guard, small: list, timeout_ms: int) -> bool:
    """Whether no state where the candidates hold takes the path of ``guard``: the guard
    contradicts the candidates' ``small`` conjuncts.  Every candidate is assumed of the state
    before the step, so then each conjunct after it holds, and none need be checked; else (or
    when z3 gives up within VACUITY_MS) nothing is decided.  A path of an action that a state
    invariant rules out (a puzzle's own action, in a phase no move enters) otherwise costs
    the full tiers for each invariant it changes.  The small conjuncts are all asked, not only
    those that read what the guard reads: the guard's variables would be gathered per path,
    and those of a large guard cost more to gather and keep than z3 takes to ignore a few
    hundred small assertions.  ``timeout_ms``: the time limit ``local`` is set back to."""
    if not small:
        return False
    try:
        with terms.time_limit(local, VACUITY_MS, timeout_ms):
            return terms.unsat(local, z3.And(guard, *small))
    except Unknown:
        return False

