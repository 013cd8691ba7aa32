"""The transition properties' step: each property on every action path, from the invariants
proved inductive, checked as Houdini checks a path (`tiers`), with the same case splits,
journal, symmetries and Dask workers."""
from __future__ import annotations

import time

import z3

from ..engine import domains as dz
from ..engine.game import Game
from ..engine.symbolic import Unknown, leaves, make_solver, run_check, substitution
from ..lang import ir
from . import induction, nearby, orbits, splits, terms, tiers
from .options import COARSE, ProveOptions, gave_up_why
from .result import Tally

# The cases a Dask worker keeps built (`Pass._built`): the next case is built while this one
# is checked (`cluster.Engine.plan_ahead`), and a worker keeping only the last would build
# each case again for every task of the other that it is sent.
KEEP_CASES = 3


def check_transitions(game: Game, trans: list[ir.Invariant], assumed: set[str],
                      options: ProveOptions, say, journal=None, symmetric=None,
                      tally=None, engine=None) -> dict:
    """Each transition property on every action path, from the invariants proved inductive
    (``assumed``): name -> (True, "") or (False, why).  A path is checked as Houdini checks one
    (`tiers.step_each`): the post-state conjuncts the path does not make trivially true, all at
    once, then one at a time, each from the invariants' conjuncts near it, and with
    ``options.split_lengths`` case by case over the sequence lengths the step changes.  Before
    that, every invariant at once is asked briefly (tiers.QUICK_MS), until it gives up on a path
    of that action; what the tiers do not prove is asked from every invariant at once again,
    with the whole time-out (a model there is a counterexample to induction).  The "previous
    version" of a transition's conjunct is the conjunct over a step that changes nothing, a
    tautology.  Why a property fails is said of the first path that breaks it (with ``engine``,
    a `cluster.Engine`, whichever Dask worker checked it).  A `journal.Journal` records each
    path's decided verdicts, and gives back those a previous run decided under the same assumed
    invariants; a case where every path held every property is recorded whole, and a resumed run
    does not build it again.  ``tally`` (a `result.Tally`), if given, counts the paths and those
    a previous run decided."""
    out = {tr.name: (True, "") for tr in trans}
    if tally is not None:
        # This step's own progress: its paths, not the invariants' (once 150 % of them).
        tally.done = tally.total = 0
    tp = Pass(game, trans, assumed, options)
    fresh, fields, names = tp.fresh, tp.fields, tp.names
    cases, after, order, prepare, posts_of = tp.cases, tp.after, tp.order, tp.prepare, \
        tp.posts_of
    if engine is not None:
        run_ = engine.run(options, [tr.name for tr in trans], sorted(assumed))

    def held_before(ci: int, live: list) -> dict[str, int]:
        """The actions whose every path in case ``ci`` held each of ``live`` in a previous
        run, each with its number of paths: they need not be built."""
        return {} if journal is None else journal.transition_held_groups(
            ci, order, names, [tr.name for tr in live])

    def done_before(ci: int, live: list, held: dict | None = None) -> int | None:
        held = held_before(ci, live) if held is None else held
        if len(held) == len(order):
            return sum(held.values())
        return None if journal is None else journal.transition_case_done(
            ci, names, [tr.name for tr in live])

    def to_build(ci: int, held: dict):
        """The actions of case ``ci`` whose paths are built: those not held in a previous
        run (under a symmetry too: a symmetry or a rotation maps a path onto one of the same
        action, so an orbit lies within the action's paths)."""
        return {a for a in order if a not in held}

    first_case: list = []       # the first case's (prepared, post_of) and its actions built

    def costs() -> dict:
        # What a path of each action took to prove in this run so far (s, a mean).
        return {a: s / n for a, (n, s) in tp.spent.items() if n}
    ahead: dict = {}            # case -> its plan's tasks, submitted while the previous case ran

    def prefetch(cj: int, live: list) -> None:
        # The next case's paths built on the workers before this case's checks (as Houdini's).
        if cj >= len(cases) or cj in ahead:
            return
        held = held_before(cj, live)
        if done_before(cj, live, held) is None:
            want = [a for a in order if a in to_build(cj, held)]
            if want:
                ahead[cj] = engine.plan_ahead(run_, "transitions", cj, game, cases[cj], want)

    def rotated(ci: int, prepared: tuple, post_of, paths: list, live: list, done: dict):
        """``paths`` of case ``ci`` but those that follow from the first case's path of the
        same action and parameters, the players numbered anew (`orbits.rotate_from_first`); a
        path a previous run decided is left to `check_share`, which reads its verdicts."""
        acts = frozenset(b.action for b in prepared[6])
        if not first_case or not acts <= first_case[1]:
            # The first case's paths of this case's actions (those of the others are not
            # needed), made once for them.
            p0 = prepare(0, set(acts))
            first_case[:] = [None if p0 is None else (p0, posts_of(0, p0)), acts]
        if first_case[0] is None:
            return paths
        p0, post0 = first_case[0]
        decided = {at for at, _ in paths if all(tr.name in done.get(at, {}) for tr in live)}

        def goals(prep, post):
            return orbits.Goals(prep[6], lambda b: (b, [c for cs in post(b, live).values()
                                                  for _, c in cs]))

        def note(at, b, sym, at0):
            if journal is not None:
                journal.record_transition(ci, at, b.action, names,
                                          {tr.name: None for tr in live},
                                          f"{sym.name} of case 1 path {at0}")
        rest = orbits.rotate_from_first(
            symmetric, "transitions", ci, fields, (cases[0], p0[6], goals(p0, post0)),
            (cases[ci], prepared[6], goals(prepared, post_of)),
            [(at, b) for at, b in paths if at not in decided],
            ([c for n in names for c in p0[0][n]], [c for n in names for c in prepared[0][n]]),
            fresh.constraints, note, say, costs())
        kept = {at for at, _ in rest}
        return [(at, b) for at, b in paths if at in decided or at in kept]

    # As in `induction.houdini`: a case whose checks went to the workers is closed once the
    # next case's checks are sent too, the cases in order (a property that a case breaks is
    # then checked on the next one too, whose verdict for it is not used).
    unclosed: list = []
    try:
        for ci, (S, N) in enumerate(zip(cases, after)):
            live = [tr for tr in trans if out[tr.name][0] is True]
            if not live:
                break
            held = held_before(ci, live)
            whole = done_before(ci, live, held)
            if whole is not None:
                say(f"transitions: case {ci + 1} of {len(cases)}: every path held in a previous "
                    f"run ({journal.label})")
                if tally is not None:
                    tally.count(whole, whole)
                continue
            only = to_build(ci, held)
            if engine is not None and symmetric is None and engine.remote():
                # The paths go to Dask workers: built there, never here.
                got = _remote_case(engine, run_, game, S, ci, order, only, held, live, names,
                                   journal, tally, say, out, ahead.pop(ci, None),
                                   lambda ci=ci, live=live: prefetch(ci + 1, live))
                # This case waits among the unclosed before the last one is closed (a
                # Ctrl-C meanwhile keeps what came back of both).
                if got is not None:
                    unclosed.append(got)
                while len(unclosed) > (1 if got is not None else 0):
                    sent, close = unclosed.pop(0)
                    close(sent)
                continue
            prepared = prepare(ci, only)
            if prepared is None:
                continue        # no state of this case satisfies the invariants
            conj, memo, readers, template, reflexive, n_leaves, bs = prepared
            # Each built action's number of paths (for `record_transition_groups`), and the
            # paths of the actions held before, reused unbuilt.
            built = {a: 0 for a in (order if only is None else only)}
            for b in bs:
                built[b.action] += 1
            unbuilt = sum(n for a, n in held.items() if a not in built)
            if tally is not None:
                tally.built += len(bs)
                tally.total += len(bs)
                tally.count(unbuilt, unbuilt)
                checked_before = tally.checked
            say(f"transitions: {len(bs)} action paths"
                + (f" of {len(built)} of {len(order)} actions" if len(built) < len(order) else "")
                + f", {len(live)} properties"
                + (f" (case {ci + 1} of {len(cases)})" if len(cases) > 1 else ""))
            done = {} if journal is None else \
                journal.transitions_checked(ci, [b.action for b in bs], names)
            if done:
                say(f"transitions: {len(done)} of {len(bs)} paths decided by a previous run "
                    f"({journal.label})")
            if tally is not None:
                reused = _reused(len(bs), done, [tr.name for tr in live])
                tally.count(reused, reused)

            post_of = posts_of(ci, prepared)
            if ci == 0:
                first_case[:] = [(prepared, post_of), frozenset(built)]

            record = None if journal is None else \
                (lambda at, action, decided, ci=ci: journal.record_transition(
                    ci, at, action, names, decided))
            check_share = tp.sharer(ci, prepared, post_of, live, done, record, tally)
            paths = list(enumerate(bs))
            if symmetric is not None and ci > 0:
                # As for the invariants: most paths follow from the first case's, the players
                # numbered from this case's actor.
                paths = rotated(ci, prepared, post_of, paths, live, done)
            later: list = []
            if symmetric is not None:
                # As for the invariants: the images of earlier paths wait for their orbit's first.
                orbs = symmetric.orbits(("transitions", ci), S, bs)
                # A path a previous run decided is left to `check_share`, which reads its
                # verdicts (a failure among them included).
                later = [(at, b) for at, b in paths if at in orbs and
                         not all(tr.name in done.get(at, {}) for tr in live)]
                waiting = {at for at, _ in later}
                paths = [(at, b) for at, b in paths if at not in waiting]
            parts: list = []

            def run(paths, ci=ci, live=live, done=done):
                if engine is not None:
                    rest = engine.ahead(paths, lambda part: parts.append(check_share(part)))
                    if rest:
                        parts.extend(engine.transitions(
                            run_, ci, tuple(tr.name for tr in live),
                            induction.by_action(rest, bs, lambda b: b), done, journal, names,
                            tally, say))
                else:
                    parts.append(check_share(paths))
            run(paths)
            if later:
                fell = {n for part in parts for n in part}
                held = [tr for tr in live if tr.name not in fell]

                def goal_of(b, held=held, post_of=post_of):
                    return (b, [c for cs in post_of(b, held).values() for _, c in cs])

                def note(at, b, sym, at0, ci=ci, held=held):
                    if journal is not None and held:
                        journal.record_transition(ci, at, b.action, names,
                                                  {tr.name: None for tr in held},
                                                  f"{sym.name} of path {at0}")
                goals = orbits.Goals(bs, goal_of)
                rest = orbits.mirrored(symmetric, ("transitions", ci), goals,
                                       [(at, goals[at]) for at, _ in later], orbs,
                                       [c for n in names for c in conj[n]], fresh.constraints,
                                       note, say, costs())
                if rest:
                    run([(at, bs[at]) for at in rest])
            while unclosed:
                sent, close = unclosed.pop(0)
                close(sent)
            _closed(ci, parts, out, journal, names, live, len(bs), built, tally,
                    reused if tally is not None else 0,
                    checked_before if tally is not None else 0)
        while unclosed:
            sent, close = unclosed.pop(0)
            close(sent)
    except BaseException:
        # Ctrl-C: what came back of a case still waiting is kept in the store too.
        for sent, _ in unclosed:
            if sent is not None:
                sent.abandon()
        raise
    return out


class Pass:
    """The transition properties' step for the properties ``trans`` from the invariants
    ``assumed`` under ``options``: the cases before and after a move, the solver, and what
    prepares a case and checks a share of its paths.  Made once per process: by
    `check_transitions`, and by each Dask worker for the paths it is sent (`remote_share`),
    the same cases and the same paths in the same order."""

    def __init__(self, game: Game, trans: list[ir.Invariant], assumed, options: ProveOptions):
        self.game, self.trans, self.options = game, trans, options
        timeout_ms = options.step_timeout_ms
        t = game.state_type
        # The states of `induction.Step`, made alike, so the very same terms: what the
        # evaluator keeps by term (the floods it unrolled) serves this pass's paths too, and
        # a case's paths built again from the same states cost a fraction of the first build
        # (docs/prover.md).
        fresh = dz.Fresh("s_")
        fields = splits.split_fields(game, options.split_on)
        invs = [i for i in game.p.invariants if not i.transition and i.name in assumed]
        names = [i.name for i in invs]
        # One case per value of the split fields (the actor's), before and after the move, as
        # for the invariants: a move then writes only the actor's part of the state.
        cases = splits.cases(game, fresh, "s", fields)
        # A copy of each case stands for the state after the move: each property is evaluated
        # once over (case, copy), and a path's post-state conjuncts are that template with the
        # copy's leaves replaced by the path's successor.  Evaluating a property afresh on each
        # path was most of the time of some checks (a count per key over nested sequences).
        after = splits.cases(game, dz.Fresh("n_"), "n", fields)
        # The solver for linear integer arithmetic, not the general one Houdini's step uses:
        # measured on two games' transition properties (every path, the invariants assumed),
        # the general one took 10 % more CPU time (99 s against 90 s; 593 s against 533 s).
        local = make_solver(timeout_ms, abstraction=game.symbolic.abstraction,
                            sides=game.symbolic.sides)
        local.add(*fresh.constraints)       # the state's bounds, made with the cases
        split_memo: dict = {}
        learned: set = set()
        hard: set = set()       # (action, property) that every invariant at once did not settle
        order = [a.name for a in game.actions]
        def prepare(ci: int, only=None):
            """Case ``ci``'s invariant conjuncts, each property's template over (case, copy) and
            which of its conjuncts are reflexive, and the action paths; None when no state of
            the case satisfies the invariants.  ``only``: the actions whose paths are built (a
            set of names; None: every action)."""
            S, N = cases[ci], after[ci]
            conj = {i.name: terms.conjuncts(game.holds_symbolic(i, S)) for i in invs}
            if any(z3.is_false(c) for cs in conj.values() for c in cs):
                return None
            memo: dict[int, tuple] = {}
            readers, _ = nearby.conjunct_readers(conj, memo)
            template = {tr.name: terms.conjuncts(game.holds_symbolic(tr, N, old=S)) for tr in trans}
            reflexive: dict[str, set] = {}
            # The copy's leaves beside the case's, to tell which leaves a path changes.
            n_leaves = list(zip(leaves(t, N), leaves(t, S)))
            to_s = {a.get_id(): (a, dz.lift(s_)) for a, s_ in n_leaves if dz.is_sym(a)}
            for tr in trans:
                # The property across a step that changes nothing (old(x) <= x with x as it
                # is): true of itself, so harmless to assume, it tells the step's splitting which
                # of the lengths the path reads it changes, and its terms stand for the old
                # versions the new ones may equal.  Only where it is true of itself: a strict
                # property (old(x) < x) is false there, and assuming it would prove anything;
                # such a conjunct is left as `true`, and checked on every path.
                # (The template over the case itself, so that its conjuncts are the template's,
                # one for one.)
                ident = [terms.substitute(c, [to_s[i] for i in terms.free_vars(c, memo)
                                              if i in to_s])
                         for c in template[tr.name]]
                reflexive[tr.name] = {k for k, c in enumerate(ident)
                                      if _valid(c, fresh.constraints)}
                conj[tr.name] = [c if k in reflexive[tr.name] else z3.BoolVal(True)
                                 for k, c in enumerate(ident)]
            bs = splits.paths(game, S, fields, only)
            return conj, memo, readers, template, reflexive, n_leaves, bs
        def posts_of(ci: int, prepared: tuple):
            """What gives, on a path of case ``ci`` (`prepare`), each property's post-state
            conjuncts."""
            S, N = cases[ci], after[ci]
            _, memo, _, template, reflexive, n_leaves, _ = prepared

            def post_of(b, props) -> dict[str, list]:
                """Each property's post-state conjuncts on path ``b`` that are not trivially true,
                as (index, conjunct)."""
                onto = substitution(t, N, b.state)
                # A split field the move sets to another value: the template, made for the old
                # value, does not apply; the property is evaluated afresh.
                afresh = any(not dz.is_sym(a) for a, _ in onto)
                onto_by_id = {a.get_id(): (a, v) for a, v in onto if dz.is_sym(a)}
                changed = {a.get_id() for (a, s_), x in zip(n_leaves, leaves(t, b.state))
                           if dz.is_sym(a) and not (x is s_ or (dz.is_sym(x) and x.eq(s_)))}
                out = {}
                for tr in props:
                    if afresh:
                        post = terms.conjuncts(game.holds_symbolic(tr, b.state, old=S))
                    else:
                        # A conjunct that reads no leaf the path changes is the property across
                        # a step that changes nothing: true when that is (reflexive).
                        post = [None if k in reflexive[tr.name]
                                and not (terms.free_vars(c, memo) & changed) else
                                terms.substitute(c, [onto_by_id[i] for i in terms.free_vars(c, memo)
                                                if i in onto_by_id])
                                for k, c in enumerate(template[tr.name])]
                    out[tr.name] = [(k, c) for k, c in enumerate(post)
                                    if c is not None and not z3.is_true(z3.simplify(c))]
                return out

            return post_of

        self.t, self.fresh, self.fields, self.invs, self.names = t, fresh, fields, invs, names
        self.cases, self.after, self.local, self.order = cases, after, local, order
        self.split_memo, self.learned, self.hard = split_memo, learned, hard
        self.prepare, self.posts_of = prepare, posts_of
        self._ready: dict = {}       # a worker's newest cases: ci -> (it, post_of, paths)
        self._whole: dict = {}       # the last case's solver of every invariant at once
        # What proving a path of each action took here: action -> [paths, seconds], for
        # `orbits.mirrored`, which settles a path by a symmetry only where proving it costs
        # more than showing that it follows (the cost of a check of a transition property
        # is often a few milliseconds, and the symmetry's check of an image many more).
        self.spent: dict = {}

    def sharer(self, ci: int, prepared: tuple, post_of, live: list, done: dict,
               record=None, tally=None):
        """What checks a share of case ``ci``'s paths ((place, path) pairs) for the
        properties ``live``: the properties that fail, each (rank, place, why); ``done``:
        what a previous run decided, by place; ``record(place, action, decided)``, if
        given, hears each path's decided verdicts (the journal or store; without it a
        property z3 gave up on fails, as without a journal)."""
        game, t, fresh, local, hard, names = self.game, self.t, self.fresh, self.local, \
            self.hard, self.names
        split_memo, learned = self.split_memo, self.learned
        timeout_ms, split = self.options.step_timeout_ms, self.options.split_lengths
        S = self.cases[ci]
        conj, memo, readers = prepared[0], prepared[1], prepared[2]
        lengths = splits.seq_lengths(S)
        # The solver of every invariant at once, made once a case (a worker is sent many
        # shares of one case).
        hit = self._whole.get(ci)
        if hit is None or hit[0] is not prepared:
            w = make_solver(timeout_ms, abstraction=game.symbolic.abstraction,
                            sides=game.symbolic.sides)
            w.add(*fresh.constraints, *[c for cs in conj.values() for c in cs])
            hit = self._whole = {ci: (prepared, w)}
            hit = hit[ci]
        whole = hit[1]

        def check_share(share, say=_quiet):
            failed: dict[str, tuple] = {}
            # With a journal, a property z3 gave up on is still checked on the later paths:
            # their verdicts are recorded for the next run, which then asks z3 again only
            # about the paths given up on.
            gave_up: dict[str, tuple] = {}
            for count, (at, b) in enumerate(share, 1):
                say("transitions: action paths checked", done=count - 1,
                    total=len(share) if isinstance(share, list) else None,
                    note=f"checking {b.action}")
                # What a previous run decided on this path; a path decided whole is skipped.
                prior = {tr.name: done[at][tr.name] for tr in live
                         if tr.name in done.get(at, {})}
                for n, why in prior.items():
                    if why is not None:
                        failed.setdefault(n, (at, why))
                if all(tr.name in failed or tr.name in prior for tr in live):
                    continue
                decided: dict[str, str | None] = {}     # held (None) or why it fails
                t_path = time.perf_counter()
                guard = dz.lift(b.guard)
                moved = {a.get_id() for a, _ in substitution(t, S, b.state)
                         if dz.is_sym(a)} & lengths.keys()
                posts = post_of(b, [tr for tr in live
                                    if tr.name not in failed and tr.name not in prior])
                for tr in live:
                    if tr.name in failed:
                        continue
                    if tr.name in prior:
                        continue
                    decided[tr.name] = None         # until shown otherwise
                    items = posts[tr.name]
                    if not items:
                        continue
                    goal = z3.Not(z3.And([c for _, c in items]))
                    if (b.action, tr.name) not in hard:
                        # Every invariant at once, briefly: often enough (the base game's
                        # piles), and a model there is a counterexample to induction.
                        try:
                            with terms.time_limit(whole, min(tiers.QUICK_MS, timeout_ms),
                                                  timeout_ms):
                                model = terms.check_assume(whole, z3.And(guard, goal))
                            if model is not None and b.approx:
                                raise Unknown(COARSE)
                            if model is not None:
                                failed[tr.name] = (at, terms.describe_cti(game, b, model, S))
                                decided[tr.name] = failed[tr.name][1]
                            continue
                        except Unknown:
                            hard.add((b.action, tr.name))   # its other paths: tiers first
                    try:
                        if tiers.step_each(local, guard, goal, conj, tr.name, items, readers,
                                      names, memo,
                                      (lengths if split else None, moved, split_memo,
                                       learned, (b.action, tr.name)),
                                      timeout_ms) is None:
                            continue
                    except Unknown:
                        pass
                    # Not proved from the nearby conjuncts: every invariant at once, with the
                    # whole time-out.
                    try:
                        model = terms.check_assume(whole, z3.And(guard, goal))
                        if model is not None and b.approx:
                            raise Unknown(COARSE)
                    except Unknown as u:
                        # A time-out depends on the machine's load: not journalled.
                        del decided[tr.name]
                        why = (at, gave_up_why(b.action, timeout_ms, str(u) == COARSE))
                        if record is None:
                            failed[tr.name] = why
                        else:
                            gave_up.setdefault(tr.name, why)
                        continue
                    if model is not None:
                        failed[tr.name] = (at, terms.describe_cti(game, b, model, S))
                        decided[tr.name] = failed[tr.name][1]
                if record is not None and decided:
                    record(at, b.action, decided)
                spent = self.spent.setdefault(b.action, [0, 0.0])
                spent[0] += 1
                spent[1] += time.perf_counter() - t_path
                if tally is not None:
                    tally.add()
            # A counterexample (rank 0) says more than a time-out (rank 1).
            return {**{n: (1, *w) for n, w in gave_up.items()},
                    **{n: (0, *w) for n, w in failed.items()}}
        return check_share

    def _built(self, ci: int, want: set) -> tuple | None:
        """A worker's case ``ci`` (kept, with the KEEP_CASES newest): its preparation without
        paths, what gives the post-state conjuncts, and the paths of the actions ``want``
        (and of those built before), by action; None when no state of the case satisfies
        the invariants."""
        if ci not in self._ready:
            prepared = self.prepare(ci, set())      # the case without its paths
            self._ready[ci] = (prepared, None if prepared is None else
                               self.posts_of(ci, prepared), {})
            while len(self._ready) > KEEP_CASES:
                self._ready.pop(next(iter(self._ready)))
        prepared, post_of, built = self._ready[ci]
        if prepared is None:
            return None
        want = set(want) - set(built)
        if want:
            for a in want:
                built[a] = []
            for b in splits.paths(self.game, self.cases[ci], self.fields, want):
                built[b.action].append(b)
        return prepared, post_of, built

    def build_action(self, ci: int, action: str, part: tuple) -> int | None:
        """The number of paths of ``action``'s instances ``part`` (lo, hi) in case ``ci``,
        built here for the shares to come (`cluster.Engine.plan`); None when the case is
        impossible."""
        got = self._built(ci, set())
        if got is None:
            return None
        built = got[2]
        key = (action, *part)
        if key not in built:
            built[key] = splits.paths(self.game, self.cases[ci], self.fields, {action}, part)
        return len(built[key])

    def remote_share(self, ci: int, live: tuple, items: list, done: dict,
                     journaled: bool) -> tuple:
        """What a Dask worker sends back for the paths ``items`` of case ``ci`` ((place,
        action, place among the action's paths) each, `induction.by_action`; only their
        actions built here) and the properties named ``live``: the failures, the records for
        the parent's journal or store (place, action, decided), and how many paths it
        checked."""
        got = self._built(ci, {it[1] for it in items if len(it) < 4 or it[3] is None})
        if got is None:
            return {}, [], 0
        prepared, post_of, built = got
        for it in items:
            if len(it) > 3 and it[3] is not None and (it[1], *it[3]) not in built:
                self.build_action(ci, it[1], it[3])
        records: list = []
        record = (lambda at, action, decided: records.append((at, action, decided))) \
            if journaled else None
        count = Tally()
        props = [tr for tr in self.trans if tr.name in live]
        failed = self.sharer(ci, prepared, post_of, props, done, record, count)(
            [(it[0], built[it[1]][it[2]] if len(it) < 4 or it[3] is None else
              built[(it[1], *it[3])][it[4]]) for it in items])
        return failed, records, count.done

def _remote_case(engine, run, game: Game, S, ci: int, order: list, only: set, held: dict,
                 live: list, names: list, journal, tally, say, out: dict, ahead=None,
                 then=None) -> tuple | None:
    """Case ``ci`` of `check_transitions` sent to the Dask workers, its paths built there
    only (`cluster.Engine.plan`): its tasks (a `cluster.Sent`, or None when it has no path)
    and what closes the case with their results, entering the failures into ``out``; None
    when a worker found the case impossible (no state of it satisfies the invariants).
    ``ahead``: the plan's tasks submitted before (`Engine.plan_ahead`), used when they build
    the same actions; ``then``: called before the checks are submitted (the next case's
    plan)."""
    want = [a for a in order if a in only]
    parts = engine.planned(ahead) if ahead is not None and ahead[0] == tuple(want) else \
        engine.plan(run, "transitions", ci, game, S, want)
    if parts is None:
        return None
    counts = {a: sum(n for _, n, _ in ps) for a, ps in parts.items()}
    bs = [induction.Unbuilt(a) for a in order if a in only for _ in range(counts[a])]
    unbuilt = sum(n for a, n in held.items() if a not in counts)
    if tally is not None:
        tally.built += len(bs)
        tally.total += len(bs)
        tally.count(unbuilt, unbuilt)
    say(f"transitions: {len(bs)} action paths"
        + (f" of {len(counts)} of {len(order)} actions" if len(counts) < len(order) else "")
        + f", {len(live)} properties, built on the workers (case {ci + 1})")
    done = {} if journal is None else \
        journal.transitions_checked(ci, [b.action for b in bs], names)
    reused = _reused(len(bs), done, [tr.name for tr in live])
    if tally is not None:
        tally.count(reused, reused)
    sent = engine.transitions(run, ci, tuple(tr.name for tr in live),
                              induction.by_action(list(enumerate(bs)), bs, lambda b: b),
                              done, journal, names, tally, say, parts, then,
                              wait=False) if bs else None

    def close(sent) -> None:
        # The paths this case's tasks counted as they came back, whatever another case
        # counted meanwhile.
        failed = [] if sent is None else sent.wait()
        counted = 0 if sent is None else sent.counted
        _closed(ci, failed, out, journal, names, live, len(bs), counts, tally, reused,
                tally.checked - counted if tally is not None else 0)
    return sent, close


def _closed(ci: int, parts: list, out: dict, journal, names: list, live: list, paths: int,
            built: dict, tally, reused: int, checked_before: int) -> None:
    """The end of case ``ci`` of `check_transitions`: each property's first failure among the
    shares' (``parts``) into ``out``; the case recorded in ``journal`` when every path held,
    and the groups of the actions ``built`` (action -> its paths); the paths a symmetry
    settled counted as checked in ``tally`` (``reused``: those a previous run decided;
    ``checked_before``: its count when the case began).  A property that a case before broke
    keeps that case's failure."""
    first: dict[str, tuple] = {}
    for part in parts:
        for n, w in part.items():
            first[n] = min(first.get(n, w), w)
    for n, (_, _, why) in first.items():
        if out[n][0] is True:
            out[n] = (False, why)
    if journal is not None and not first:
        journal.record_transition_case(ci, names, [tr.name for tr in live], paths)
    if journal is not None:
        journal.record_transition_groups(ci, built, names, [tr.name for tr in live])
    if tally is not None:
        tally.settled(paths - reused - (tally.checked - checked_before))


def _reused(n: int, done: dict, live: list[str]) -> int:
    """How many of ``n`` paths a previous run's verdicts (``done``) settle, as `check_share`
    goes through them: each live property either decided there or broken on an earlier
    path."""
    fell: set = set()
    out = 0
    for at in range(n):
        prior = done.get(at, {})
        out += all(p in prior or p in fell for p in live)
        fell |= {p for p, why in prior.items() if why is not None}
    return out


def _valid(formula, bounds) -> bool:
    """Whether z3 proves ``formula`` true under the state's ``bounds`` alone within tiers.QUICK_MS
    (giving up counts as not proved)."""
    if z3.is_true(z3.simplify(formula)):
        return True
    solver = make_solver(tiers.QUICK_MS)
    solver.add(*bounds, z3.Not(formula))
    return run_check(solver) == z3.unsat



def _quiet(text: str, done=None, total=None, note: str = "") -> None:
    return None
