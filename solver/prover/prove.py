"""Invariants: proved inductive (k = 1, jointly, by Houdini's fixpoint), or checked by bounded
model checking from the initial state ("holds up to depth k"), or refuted with a trace that the
interpreter replays."""
from __future__ import annotations

import contextlib
import itertools
import json
import math
import random
import time
from dataclasses import dataclass, field, replace

import z3
from z3.z3 import _to_expr_ref as _expr_ref

from ..engine import domains as dz
from ..lang import ir
from ..engine import linear
from . import regionfacts
from . import symmetry
from ..lang.errors import RulebookError
from ..engine.evaluate import Refused
from ..engine.game import Game, Move
from ..lang.irwalk import nodes
from ..lang.types import BoolT, EnumT, IntT, finite
from ..engine.symbolic import (Unknown, branches, check, leaves, make_solver, read_moves, substitution,
                       unroll)


@dataclass
class Result:
    name: str
    kind: str                    # "invariant" | "transition"
    status: str                  # inductive | holds | refuted | unknown
    depth: int | None = None     # for "holds up to depth k" and refutations
    detail: str = ""
    trace: list = field(default_factory=list)
    seconds: float = 0.0

    def headline(self) -> str:
        match self.status:
            case "inductive":
                return "inductive (1-induction, jointly with the other inductive invariants)"
            case "holds":
                return f"holds up to depth {self.depth} (bounded model checking)"
            case "refuted":
                return f"refuted at depth {self.depth}"
        return "unknown"

    def as_json(self) -> dict:
        return {"invariant": self.name, "kind": self.kind, "status": self.status,
                "depth": self.depth, "summary": self.headline(), "detail": self.detail,
                "trace": self.trace, "seconds": round(self.seconds, 3)}


def prove(game: Game, bmc_depth: int = 4, timeout_ms: int = 120_000,
          only: str | tuple[str, ...] | None = None,
          progress=None, step_timeout_ms: int = 5_000,
          split_lengths: bool = False, exact_reals: bool = False,
          split_on: tuple[str, ...] = (), jobs: int = 1,
          journal: str | None = None, opaque_fix: bool = False,
          alone: bool = False, region_facts: bool = False,
          symmetric: bool = False) -> list[Result]:
    """Prove the invariants.  ``step_timeout_ms`` bounds each query of the inductive step (a
    query that times out leaves its invariant to bounded model checking, never "proved");
    ``timeout_ms`` bounds each bounded-model-checking query.  ``split_lengths``: a step query
    z3 gives up on is checked again case by case over the lengths of the sequences the step
    changes (a count over a sequence an item was pushed onto): slower, and it proves more.
    ``exact_reals``: the step decides each `exists real` exactly instead of reading it as an
    uninterpreted predicate of its inputs (see `linear.opaque`).  ``split_on``: state fields
    (bool, integer or enum) whose every value is a case of the step, that field concrete: a
    step that reads a constant table at such a field (a record's kind) then reads numbers.
    ``jobs``: processes that check the inductive step's paths at once (forked; 1 on a
    platform without fork).  The verdicts do not depend on it, only the time.  ``journal``: a
    file where each action path of the inductive step is recorded once checked; a run with
    the same spec, parameters and options skips the paths recorded there (see `Journal`).
    ``opaque_fix``: the step reads each expression that computes a `fix` over symbolic
    inputs as uninterpreted functions of what it reads (see `linear.opaque_fixes`): a step
    that floods a large board then builds, and what does not depend on the floods is proved;
    what does is left to bounded model checking, which computes the fixpoints.  ``only``:
    the invariants (a name or names) to prove and report, with the others as auxiliaries of
    the induction; with ``alone``, without them: the named ones must be inductive together,
    and the step checks their conjuncts only (a step too costly for the whole set may not be
    for a part of it).  ``symmetric``: a path that is the image of an earlier one under a
    symmetry of the board is not proved when z3 shows that it follows from that one
    mirrored (see solver/prover/symmetry.py); the verdicts are the same, only the time changes."""
    names = (only,) if isinstance(only, str) else only
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
    # The step reads each `exists real` as an uninterpreted predicate (linear.opaque): what
    # holds for every predicate holds for the true one, so "inductive" stays sound, and a
    # step that needs no more than "equal inputs, equal answers" is proved without real
    # arithmetic.  ``exact_reals`` encodes them exactly instead (primal or Farkas dual).
    # ``region_facts``: the region builtins are unknowns with the facts of connected regions
    # (solver/prover/regionfacts.py), the other fixpoints uninterpreted as with ``opaque_fix``.
    opaque_fix = opaque_fix or region_facts
    regionfacts.reset()
    with contextlib.nullcontext() if exact_reals else linear.opaque(), \
            linear.opaque_fixes() if opaque_fix else contextlib.nullcontext(), \
            regionfacts.region_facts() if region_facts else contextlib.nullcontext():
        log = None if journal is None else Journal(
            journal, _run_key(game, step_timeout_ms, split_lengths, exact_reals, split_on,
                              state_invs, opaque_fix, region_facts), say)
        mirror = _Symmetric(game, say) if symmetric else None
        inductive, ctis = _houdini(game, state_invs, step_timeout_ms, say, split_lengths,
                                   split_on, jobs, log, mirror)
        trans = [i for i in invs if i.transition]
        trans_ok = _transitions(game, trans, inductive, step_timeout_ms, say, split_lengths,
                                split_on, jobs, log, mirror) if trans else {}
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
        say(f"bounded model checking {', '.join(i.name for i in rest)} to depth {bmc_depth}")
        for r in _bmc(game, rest, bmc_depth, timeout_ms, say):
            if r.status == "holds":
                why = ctis.get(r.name) or (trans_ok.get(r.name, (None, ""))[1])
                if why:
                    r.detail = f"not inductive: {why}" + (
                        " (the step read each fixpoint as uninterpreted functions: that "
                        "state may be one the fixpoints rule out)" if opaque_fix else "")
            results[r.name] = r
    return [results[i.name] for i in invs]


def _substitute(t, pairs):
    """``z3.substitute(t, *pairs)`` without the checks z3's Python layer makes of each pair's
    sorts (the pairs here are a state's leaves and their new values, of one sort by
    construction).  Those checks took two thirds of the time of building a step's paths:
    thousands of conjuncts, each with its own pairs."""
    n = len(pairs)
    if n == 0:
        return t
    frm = (z3.Ast * n)()
    to = (z3.Ast * n)()
    for i, (a, b) in enumerate(pairs):
        frm[i] = a.as_ast()
        to[i] = b.as_ast()
    return _expr_ref(z3.Z3_substitute(t.ctx_ref(), t.as_ast(), n, frm, to), t.ctx)


def _conjuncts(term) -> list:
    """The top-level conjuncts of a term (a `forall` over a finite domain gives one each);
    ``a or (b and c)`` gives ``a or b`` and ``a or c``, so that ``A implies forall x: P(x)``
    splits into one small conjunct per x."""
    if z3.is_and(term):
        out = []
        for c in term.children():
            out.extend(_conjuncts(c))
        return out
    if z3.is_or(term):
        kids = term.children()
        for i, k in enumerate(kids):
            if z3.is_and(k):
                rest = kids[:i] + kids[i + 1:]
                out = []
                for c in _conjuncts(k):
                    out.extend(_conjuncts(z3.Or(*rest, c)))
                return out
    return [term]


def _free_vars(term, memo: dict) -> frozenset:
    """The ids of the uninterpreted constants a term reads (memoised over shared subterms;
    an explicit post-order, since terms are DAGs deeper than Python's recursion limit).

    The memo holds each term beside its answer: a z3 id is reused once its term is freed, and
    a memo keyed by the id alone then answers for another term (the conjuncts near a step
    came out wrong, and with them spurious counterexamples to induction)."""
    stack = [(term, False)]
    while stack:
        e, expanded = stack.pop()
        i = e.get_id()
        if i in memo:
            continue
        if expanded:
            if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                memo[i] = (e, frozenset((i,)))
            else:
                acc = frozenset()
                for ch in e.children():
                    acc |= memo[ch.get_id()][1]
                memo[i] = (e, acc)
            continue
        stack.append((e, True))
        for ch in e.children():
            if ch.get_id() not in memo:
                stack.append((ch, False))
    return memo[term.get_id()][1]


def _symbols(pairs: list) -> tuple[list, list]:
    """The uninterpreted constants the terms of the pairs read (in the order of their ids) and
    the uninterpreted functions of one argument or more they apply (by name), in one walk."""
    seen: set = set()
    consts: dict = {}
    funs: dict = {}
    stack = [t for pair in pairs for t in pair]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_app(e):
            d = e.decl()
            if d.kind() == z3.Z3_OP_UNINTERPRETED:
                if d.arity() == 0:
                    consts.setdefault(e.get_id(), e)
                else:
                    funs.setdefault(d.get_id(), d)
            stack.extend(e.children())
    return ([consts[i] for i in sorted(consts)],
            sorted(funs.values(), key=lambda d: (d.name(), d.get_id())))


def _actor_field(game: Game) -> int | None:
    a = game.p.actor
    if isinstance(a, ir.Field) and isinstance(a.record, ir.StateRef):
        return a.index
    return None


def _reads_field(e, index: int) -> bool:
    """Whether an IR expression reads a given field of the current state (or, through a bare
    `state`, possibly any field)."""
    refs = fields = 0
    for n in nodes(e):
        if isinstance(n, ir.StateRef) and not n.old:
            refs += 1
        elif isinstance(n, ir.Field) and isinstance(n.record, ir.StateRef) and not n.record.old:
            if n.index == index:
                return True
            fields += 1
    return refs > fields  # a state reference that is not the record of a field access


def _split_fields(game: Game, names=()) -> list[int]:
    """The state fields the step is checked case by case over: the actor's, when the spec's
    `actor` is a state field, and those named (``prove --split-on``)."""
    t = game.state_type
    index = {n: i for i, (n, _) in enumerate(t.fields)}
    out = []
    for n in names:
        if n not in index:
            raise RulebookError(f"{game.name} has no state field named {n!r} "
                                f"(state fields: {', '.join(index)})")
        if not isinstance(t.fields[index[n]][1], (IntT, EnumT, BoolT)):
            raise RulebookError(f"--split-on {n}: only a bool, integer or enum field can be "
                                f"split into cases")
        out.append(index[n])
    ai = _actor_field(game)
    if ai is not None and ai not in out:
        out.append(ai)
    return out


def _cases(game: Game, fresh: dz.Fresh, tag: str, split: list[int] | None = None) -> list:
    """Fresh symbolic states covering every state: one per combination of values of the
    ``split`` fields, those fields concrete.  With a concrete actor a move writes only the
    actor's part of the state; with a concrete kind of piece its cells are numbers."""
    t = game.state_type
    if split is None:
        split = _split_fields(game)
    base = fresh.value(t, tag)
    out = []
    for combo in itertools.product(*(finite(t.fields[i][1]).values for i in split)):
        st = list(base)
        for i, v in zip(split, combo):
            st[i] = v
        out.append(tuple(st))
    return out


def _split_after(game: Game, b, fields: list[int]) -> list:
    """The path ``b``, one path per value a split field may have after it when the move sets
    it to a term (the next player, the highest bidder): that term is replaced by the value
    wherever the successor reads it, under the guard that it has that value.  The successor
    then reads its split fields as numbers, as the state before it did: a count kept for
    every player but the one to move is a sum of the others, not a sum of `if`s over a term
    z3 must case-split itself."""
    t = game.state_type
    out = [b]
    for f in fields:
        nxt = []
        for b1 in out:
            term = b1.state[f]
            if not dz.is_sym(term):
                nxt.append(b1)
                continue
            for v in finite(t.fields[f][1]).values:
                val = dz.lift(v)
                guard = z3.simplify(z3.And(dz.lift(b1.guard), term == val))
                if z3.is_false(guard):
                    continue
                st = list(_substituted(b1.state, term, val))
                st[f] = v
                nxt.append(replace(b1, guard=guard, state=tuple(st)))
        out = nxt
    return out


def _substituted(v, term, val):
    """A value with every occurrence of ``term`` in its leaves replaced by ``val`` (and each
    leaf simplified: a leaf that becomes a constant is a Python value again)."""
    if isinstance(v, dz.SymSeq):
        return dz.SymSeq(_substituted(v.length, term, val),
                         tuple(_substituted(x, term, val) for x in v.slots))
    if isinstance(v, tuple):
        return tuple(_substituted(x, term, val) for x in v)
    if not dz.is_sym(v):
        return v
    r = z3.simplify(z3.substitute(v, (term, val)))
    if z3.is_int_value(r):
        return r.as_long()
    if z3.is_true(r) or z3.is_false(r):
        return z3.is_true(r)
    return r


def _readers(conj: dict, memo: dict) -> tuple[dict, dict]:
    """Who reads what among the candidates' conjuncts: variable id -> the (name, index) of
    the conjuncts that read it, and (name, index) -> the variables it reads."""
    readers: dict[int, list] = {}
    reads: dict[tuple, frozenset] = {}
    for n, cs in conj.items():
        for k, c in enumerate(cs):
            fv = reads[(n, k)] = _free_vars(c, memo)
            for v in fv:
                readers.setdefault(v, []).append((n, k))
    return readers, reads


def _houdini(game: Game, invs: list[ir.Invariant], timeout_ms: int, say,
             split: bool = False, split_on=(), jobs: int = 1, journal=None, symmetric=None):
    """Houdini: assume every candidate, check each action path, drop the candidates that a
    path breaks, and repeat until none is dropped; the survivors are inductive together.

    A path changes few leaves, so after substitution most conjuncts are the very same term as
    before (and hold by assumption).  Only changed conjuncts are checked: first from their own
    previous versions alone, then, if that is not enough, from every assumption.  With ``jobs``
    over 1, each round's paths are shared out among that many forked processes.  A `Journal`
    records each path once checked, and gives back those a previous run checked."""
    t = game.state_type
    fresh = dz.Fresh("s_")
    cases = []
    fields = _split_fields(game, split_on)
    reads_actor = {i.name: any(_reads_field(i.expr, f) for f in fields) for i in invs}
    all_cases = _cases(game, fresh, "s", fields)
    for ci, S in enumerate(all_cases):
        lengths = _seq_lengths(S)
        conj = {i.name: _conjuncts(game.holds_symbolic(i, S)) for i in invs}
        # A case whose split fields already falsify a candidate (a phase no move enters) is
        # assumed away while that candidate stands: its paths are built only if it falls.
        falsified = {n for n, cs in conj.items() if any(z3.is_false(c) for c in cs)}
        memo: dict[int, tuple] = {}
        readers, reads = _readers(conj, memo)
        small = [nk for nk, fv in reads.items() if len(fv) <= VACUITY_VARS]
        once: list = []         # this case's marker: built already (even if it has no path)

        def build(S=S, conj=conj, readers=readers, reads=reads, lengths=lengths, ci=ci,
                  built=once):
            # Once (a case of no path is not built again): the paths, put in the case's list.
            if built:
                return []
            built.append(True)
            bs = [b2 for b in branches(game, S) for b2 in _split_after(game, b, fields)]
            say(f"induction: {len(bs)} action paths, {len(invs)} candidate invariants"
                + (f" (case {ci + 1} of {len(all_cases)})" if len(all_cases) > 1 else ""))
            work = []
            for b in bs:
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
                            new = _conjuncts(game.holds_symbolic(inv, b.state))
                            changed.extend((inv.name, k, c2) for k, c2 in enumerate(new))
                            touched -= {(inv.name, k) for k in range(len(conj[inv.name]))}
                for n, k in sorted(touched):
                    c = conj[n][k]
                    mine = [pairs[i] for i in reads[(n, k)] if i in pairs]
                    c2 = _substitute(c, mine)
                    if not c2.eq(c):
                        changed.append((n, k, c2))
                work.append((b, changed, {i for i in pairs if i in lengths}))
            return work
        cases.append((S, conj, [], readers, lengths, falsified, build, small))
    candidates = [i.name for i in invs]
    ctis: dict[str, str] = {}
    # z3's general solver: the queries hold the `exists real` predicates (uninterpreted)
    # beside linear integer arithmetic, and on paths that read many of them it took half the
    # time of the linear-integer solver (47 s against 97 s for two paths), the same elsewhere.
    local = make_solver(timeout_ms, general=True)
    local.add(*fresh.constraints)
    split_memo: dict = {}
    learned: set = set()      # (action, invariant) whose steps needed splitting
    while True:
        dropped: set[str] = set()
        timing: dict = {}
        for ci, (S, conj, work, readers_of, lengths, falsified, build, small) \
                in enumerate(cases):
            if falsified & set(candidates):
                continue
            if not work and journal is not None and journal.case_done(ci, candidates):
                # Every path of this case was checked under these candidates and none broke
                # one: the case is not even built (building a large one takes minutes).
                say(f"induction: case {ci + 1} of {len(cases)}: every path checked by a "
                    f"previous run (journal {journal.path})")
                continue
            if not work:
                work.extend(build())

            def check_paths(paths, say=say, S=S, conj=conj, readers_of=readers_of,
                            lengths=lengths, ci=ci, small=small):
                note = None if journal is None else \
                    (lambda at, b, why, skipped, took: journal.record(
                        ci, at, b.action, candidates, why, skipped, seconds=took))
                return _check_paths(game, S, paths, local, conj, readers_of, candidates,
                                    lengths, (split_memo, learned, split), timeout_ms, say,
                                    note, small)
            paths = list(enumerate(work))
            results = []
            if journal is not None:
                # Paths a previous run checked under these very candidates: their verdicts.
                done = journal.checked(ci, [b.action for b, _, _ in work], candidates)
                if done:
                    say(f"induction: {len(done)} of {len(paths)} paths checked by a previous "
                        f"run (journal {journal.path})")
                    why: dict[str, tuple] = {}
                    for at, fell in done.items():
                        for n, w in fell.items():
                            why[n] = min(why.get(n, (at, w)), (at, w))
                    results.append((set(why), why, {}, set()))
                    paths = [(at, x) for at, x in paths if at not in done]
            if symmetric is not None and ci > 0 and paths \
                    and not cases[0][5] & set(candidates):
                # The players numbered from this case's actor: most paths follow from the
                # first case's, all of them settled by now (this round or a previous run).
                fell_here = set().union(*(d for d, *_ in results))
                paths = _rotated(symmetric, cases, ci, fields, work, paths, candidates,
                                 dropped | fell_here, fresh.constraints, journal, jobs, say,
                                 timing)
            later: list = []
            if symmetric is not None:
                # The images of earlier paths under the board's symmetries wait: once the
                # first of each orbit is proved, most follow from it (`_mirrored`).
                orbs = symmetric.orbits(("induction", ci), S, [b for b, _, _ in work])
                later = [(at, x) for at, x in paths if at in orbs]
                paths = [(at, x) for at, x in paths if at not in orbs]

            def run(paths, ci=ci):
                if jobs > 1:
                    results.extend(_forked(check_paths, _pulled(paths, jobs), say,
                                           _build_next(cases, ci, candidates, journal)))
                else:
                    results.append(check_paths(paths))
            run(paths)
            if later:
                fell = set().union(*(d for d, *_ in results))
                targets = [n for n in candidates if n not in fell]
                # What each action's proofs cost: this run's, and a previous run's (the
                # paths it proved are not proved again).
                costs = _costs(journal, ci, work, candidates,
                               [tm for _, _, tm, _ in results])

                def goal_of(x, targets=targets):
                    return (x[0], [c2 for n, _, c2 in x[1] if n in targets])

                def note(at, b, sym, at0, ci=ci, fell=fell):
                    if journal is not None:
                        journal.record(ci, at, b.action, candidates, {}, sorted(fell),
                                       f"{sym.name} of path {at0}")
                goals = _Goals(work, goal_of)
                rest = _mirror_all(symmetric, ("induction", ci), goals,
                                   [(at, goals[at]) for at, _ in later], orbs,
                                   [c for n in candidates for c in conj[n]],
                                   fresh.constraints, note, say, jobs, costs)
                if rest:
                    run([(at, work[at]) for at in rest])
            # Why a candidate fell: on the first path that breaks it, as one process would say.
            first: dict[str, tuple] = {}
            for d, c, tm, lr in results:
                dropped |= d
                for n, at in c.items():
                    first[n] = min(first.get(n, at), at)
                for a, (x, s_) in tm.items():
                    t_ = timing.setdefault(a, [0, 0.0])
                    t_[0] += x
                    t_[1] += s_
                learned |= lr
            for n, (_, why) in sorted(first.items()):
                ctis.setdefault(n, why)
            if journal is not None and not any(d for d, *_ in results):
                journal.record_case(ci, candidates, len(work))
        say("induction: checked " + ", ".join(f"{a} ({n} paths, {s_:.1f} s)"
                                                for a, (n, s_) in timing.items()))
        if not dropped:
            return set(candidates), ctis
        say(f"induction: not inductive: {', '.join(sorted(dropped))}; retrying the rest")
        candidates = [n for n in candidates if n not in dropped]


# Long work says how far it is at least this often (s), and every 100 paths.
PROGRESS_S = 60.0

# A path whose orbit's first took less than this (s, the action's mean) is proved itself: a
# symmetry check costs 0.2-0.8 s on 8 x 8.
MIRROR_MIN_S = 0.5
# An action none of whose first MIRROR_MISSES images followed is not mirrored further (a rule
# that is not symmetric), nor one whose checks, after that many misses, have cost more a path
# they settled than proving a path does (a rule that favours one player: each miss may run
# to the check's time limit, symmetry.CHECK_MS), or, when what a proof of it costs is not
# known, more of whose images missed than followed (on 8 x 8 an action of 4,032 paths a case
# whose first image followed, then missed at 10-15 s an image).
MIRROR_MISSES = 3


def _mirrored(symmetric, key, work: list, later: list, orbs: dict, assumed: list,
              bounds: list, note, say, costs=None, source: str = "") -> list[int]:
    """Which paths of ``later`` (an iterable of (index, (path, goal))) do not follow by a
    symmetry from the first path of their orbit (proved this round, or by a previous run): to be proved
    themselves.  ``work[at]`` is (path, goal) too, its goal without the properties some path
    broke (or z3 gave up on): the others held on every path checked, so on each orbit's
    first; ``assumed``: what the proofs assumed.  ``note(at, path, symmetry, from)`` hears
    of each path that follows.  ``costs``: what a path of each action costs to prove (s, a
    mean): an action under MIRROR_MIN_S is proved, not mirrored, and so is one whose checks
    have cost more than that a path they settled, after MIRROR_MISSES that did not.  With
    ``source`` (what ``work`` is: another case's paths, all of them settled), a path may
    follow from any path of ``work``, not only from the first of an orbit."""
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
        cost = costs.get(b.action)
        if (cost is not None and cost < MIRROR_MIN_S) or (hits[1] >= MIRROR_MISSES and (
                not hits[0] or (hits[1] > hits[0] if cost is None
                                else hits[2] / hits[0] > cost))):
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


def _rotated(symmetric, cases: list, ci: int, fields: list, work: list, paths: list,
             candidates: list, fell: set, bounds: list, journal, jobs: int, say,
             timing: dict) -> list:
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
    if not w0:
        w0.extend(build0())
    targets = [n for n in candidates if n not in fell]

    def goal_of(x, targets=targets):
        return (x[0], [c2 for n, _, c2 in x[1] if n in targets])

    def note(at, b, sym, at0):
        if journal is not None:
            journal.record(ci, at, b.action, candidates, {}, sorted(fell),
                           f"{sym.name} of case 1 path {at0}")
    # What each action's proofs cost (the first case's, as this run and the journal say).
    costs = _costs(journal, 0, w0, candidates, [timing])
    return _rotate_from_first(
        symmetric, "induction", ci, fields, (S0, [b for b, _, _ in w0], _Goals(w0, goal_of)),
        (S, [b for b, _, _ in work], _Goals(work, goal_of)), paths,
        ([c for n in candidates for c in conj0[n]], [c for n in candidates for c in conj[n]]),
        bounds, note, say, jobs, costs)


def _rotate_from_first(symmetric, key: str, ci: int, fields: list, first: tuple, here: tuple,
                       paths: list, assumed: tuple, bounds: list, note, say, jobs: int,
                       costs=None) -> list:
    """``paths`` of case ``ci`` of a pass (``key``) but those that follow from the first
    case's path of the same action and parameters, the players numbered from this case's
    actor (`symmetry.Rotation`).  ``first`` and ``here``: each case's state, its paths and
    their `_Goals`; ``assumed``: the conjuncts each case assumes."""
    (S0, bs0, goals0), (S, bs, goals) = first, here
    rot = symmetric.rotation(ci, fields, S0, S, assumed[0])
    if rot is None:
        return paths
    # A path is named by its action, its parameters and, when the move hands the turn to a
    # player (`_split_after`), that player numbered back.
    firsts = {k: at0 for at0, k in enumerate(_rotation_keys(bs0, fields[0], 0, rot.n))}
    keys = _rotation_keys(bs, fields[0], ci, rot.n)
    orbs = {at: [(firsts[keys[at]], rot)] for at, _ in paths if keys[at] in firsts}
    if not orbs:
        return paths
    rest = set(_mirror_all(symmetric, (key, ci), goals0,
                           [(at, goals[at]) for at in sorted(orbs)], orbs, assumed[1], bounds,
                           note, say, jobs, costs,
                           source="the first case's, the players numbered anew"))
    return [(at, x) for at, x in paths if at not in orbs or at in rest]


def _costs(journal, ci: int, work: list, candidates, timings: list) -> dict:
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


def _mirror_all(symmetric, key, work, later, orbs, assumed, bounds, note, say, jobs,
                costs=None, source: str = "") -> list[int]:
    """`_mirrored` over ``later``, in ``jobs`` forked processes."""
    def share(part, say=say):
        # (``part`` draws the next path none has drawn: a list of it would drain it first.)
        return _mirrored(symmetric, key, work, part, orbs, assumed, bounds,
                         note, say, costs, source)
    if jobs > 1 and len(later) > 1:
        return [at for part in _forked(share, _pulled(later, jobs), say) for at in part]
    return share(later)


class _Goals:
    """``work[at]`` as (path, goal), made when first asked for (in the process that asks)."""

    def __init__(self, work: list, goal_of):
        self.work, self.goal_of, self.made = work, goal_of, {}

    def __getitem__(self, at: int):
        hit = self.made.get(at)
        if hit is None:
            hit = self.made[at] = self.goal_of(self.work[at])
        return hit


class _Symmetric:
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


def _build_next(cases: list, ci: int, candidates, journal):
    """What builds the paths of the next case after ``ci`` that this round will check (not
    assumed away, not built yet, not done by a previous run), in place; None when there is
    none."""
    def skip(cj):
        _, _, work, _, _, falsified, _, _ = cases[cj]
        return bool(falsified & set(candidates) or work or (
            journal is not None and journal.case_done(cj, candidates)))
    cj = _next_case(len(cases), ci, skip)
    if cj is None:
        return None
    _, _, work, _, _, _, build, _ = cases[cj]
    return lambda: work.extend(build())


def _next_case(n: int, ci: int, skip) -> int | None:
    """The first of the ``n`` cases after ``ci`` that ``skip`` does not rule out, or None."""
    return next((cj for cj in range(ci + 1, n) if not skip(cj)), None)


def _check_paths(game, S, work, local, conj, readers_of, candidates, lengths, split, timeout_ms,
                 say, note=None, small=()):
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
    ``small``: the (name, index) of the conjuncts that `_vacuous` tries a guard against."""
    dropped: set[str] = set()
    unsure: set[str] = set()          # z3 gave up on them (still checked, with a journal)
    ctis: dict[str, str] = {}
    timing: dict = {}
    memo: dict = {}
    learned = split[1]
    vacuity: dict = {}      # action -> [paths found vacuous, paths not]
    # The candidates are those of this round for every path: their small conjuncts, once.
    small_now = [conj[n][k] for n, k in small if n in candidates]
    said = time.perf_counter()
    for at, (b, changed, moved_lengths) in work:
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
            try:
                # Every candidate at once is too much for z3 on real specs: what the two
                # local tiers cannot prove goes to bounded model checking.
                verdict = _step_each(local, guard, goal, conj, n, items, readers_of,
                                     candidates, memo,
                                     (lengths if split[2] else None, moved_lengths,
                                      split[0], learned, (b.action, n)),
                                     timeout_ms)
            except Unknown:
                (unsure if note is not None else dropped).add(n)
                gave_up = True
                ctis.setdefault(n, (at, f"z3 gave up on the inductive step (a path of "
                                        f"{b.action}, {timeout_ms / 1000:g} s per query)"))
                continue
            if verdict is not None:
                dropped.add(n)
                # Over a time-out on an earlier path (with a journal): this path's record
                # must say that it breaks the candidate.
                ctis[n] = (at, "not provable from the invariants it shares variables "
                               "with: " + _describe_cti(game, b, verdict, S))
        tm = timing.setdefault(b.action, [0, 0.0])
        tm[0] += 1
        tm[1] += time.perf_counter() - t_b
        if note is not None and not gave_up:
            # A time-out depends on the machine's load: such a path is checked again.
            note(at, b, {n: why for n, (a2, why) in ctis.items() if a2 == at}, skipped,
                 time.perf_counter() - t_b)
        done = sum(x for x, _ in timing.values())
        if done % 100 == 0 or time.perf_counter() - said > PROGRESS_S:
            said = time.perf_counter()
            say(f"induction: {done} paths checked ("
                + ", ".join(f"{a} {x}: {s_:.0f} s" for a, (x, s_) in timing.items()) + ")")
    return dropped | unsure, ctis, timing, set(learned)


# A path's guard is first checked against the candidates' conjuncts that read no more than
# this many variables (a phase that no reachable state is in) ...
VACUITY_VARS = 8
# ... within this long (ms); giving up decides nothing.  An action none of whose first
# VACUITY_MISSES paths was vacuous is not asked about again (most actions are possible).
VACUITY_MS = 500
VACUITY_MISSES = 3


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
        with _time_limit(local, VACUITY_MS, timeout_ms):
            return _unsat(local, z3.And(guard, *small))
    except Unknown:
        return False


def _run_key(game: Game, step_timeout_ms: int, split_lengths: bool, exact_reals: bool,
             split_on, invs, opaque_fix: bool = False, region_facts: bool = False) -> dict:
    """What a proof's inductive step depends on: a journal of another run is not reused.  The
    spec counts by its rules, invariants and transitions (`proof_digest`, as for a stored
    proof): a changed puzzle or example leaves a journal of hours current."""
    from ..lang.digest import proof_digest
    return {"game": game.name, "spec": proof_digest(game),
            "params": sorted(game.p.param_values.items()),
            "readings": sorted(game.symbols.reading_choices.items()),
            "step_timeout_ms": step_timeout_ms, "split_lengths": split_lengths,
            "exact_reals": exact_reals, "split_on": list(split_on),
            **({"opaque_fix": True} if opaque_fix else {}),
            **({"region_facts": True} if region_facts else {}),
            "invariants": [i.name for i in invs], "z3": z3.get_version_string(), "format": 2}


class Journal:
    """The action paths of the inductive step checked so far, one JSON line each, after a
    first line naming the run (`_run_key`): a proof of hours that is stopped resumes where
    it stopped.  A path counts only for the Houdini round it was checked in (the same
    candidates), the same case and the same action at the same place in the case's paths;
    the candidates it broke come back with their reasons.  The transition properties' paths
    are recorded too (``"kind": "transition"``), each with the invariants it assumed, and
    a case whose every path held them (``"kind": "transition-case"``).  A
    path on which z3 timed out is not recorded: a time-out says more of the machine's load
    than of the rules.  Forked workers append their own lines (one short write each).  A
    line cut short by a kill is skipped."""

    def __init__(self, path, key: dict, say):
        self.path = str(path)
        self.records: list[dict] = []
        self.say = say
        lines = []
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            pass
        except OSError as e:
            raise RulebookError(f"{self.path}: cannot read the journal: {e.strerror}") from None
        key = json.loads(json.dumps(key))   # as it reads back: tuples are lists in JSON
        head = _json_line(lines[0]) if lines else None
        if head is not None and head.get("journal") == key:
            self.records = [r for r in map(_json_line, lines[1:]) if r is not None]
            paths = sum(1 for r in self.records
                        if r.get("kind") not in ("case", "transition-case"))
            say(f"journal {self.path}: {paths} paths recorded by a previous run")
        else:
            if lines:
                say(f"journal {self.path} is of another run (spec, parameters or options "
                    f"differ): starting afresh")
            try:
                with open(self.path, "w", encoding="utf-8") as f:
                    f.write(json.dumps({"journal": key}) + "\n")
            except OSError as e:
                raise RulebookError(f"{self.path}: cannot write the journal: "
                                    f"{e.strerror}") from None

    def checked(self, case: int, actions: list[str], candidates) -> dict[int, dict]:
        """The paths of ``case`` checked under ``candidates``: path number -> the candidates
        it broke, with why."""
        out: dict[int, dict] = {}
        skipped: dict[int, set] = {}
        for at, r in self._of_case("step", case, actions, "candidates", candidates):
            out[at] = dict(r.get("fell") or {})
            skipped[at] = set(r.get("skipped") or ())
        # A path that left out a candidate fallen before it counts only if that candidate
        # falls again here (on a path recorded too).
        fallen = {n for fell in out.values() for n in fell}
        return {at: fell for at, fell in out.items() if skipped[at] <= fallen}

    def case_done(self, case: int, candidates) -> bool:
        """Whether a previous run checked every path of ``case`` under ``candidates``, none
        breaking one and none timing out (`record_case`)."""
        names = sorted(candidates)
        return any(r.get("kind") == "case" and r.get("case") == case
                   and r.get("candidates") == names for r in self.records)

    def record_case(self, case: int, candidates, paths: int) -> None:
        """Every path of ``case`` held every candidate: a run that resumes does not build
        the case again.  Not written when a candidate fell (or z3 gave up on one) there."""
        self._append({"kind": "case", "case": case, "candidates": sorted(candidates),
                      "paths": paths})

    def record(self, case: int, at: int, action: str, candidates, fell: dict,
               skipped: list, by: str | None = None, seconds: float | None = None) -> None:
        """``by``: the symmetry the path followed by, when it was not proved itself;
        ``seconds``: how long its proof took."""
        self._append({"case": case, "path": at, "action": action,
                      "candidates": sorted(candidates), "fell": fell, "skipped": skipped,
                      **({"by": by} if by else {}),
                      **({"seconds": round(seconds, 3)} if seconds is not None else {})})

    def spent(self, case: int, actions: list[str], candidates) -> dict[str, list]:
        """Per action, [paths, seconds] of the proofs recorded for ``case`` under
        ``candidates`` (those that say how long they took): how costly its paths are."""
        out: dict[str, list] = {}
        for _, r in self._of_case("step", case, actions, "candidates", candidates):
            if isinstance(r.get("seconds"), (int, float)) and "by" not in r:
                t_ = out.setdefault(r["action"], [0, 0.0])
                t_[0] += 1
                t_[1] += r["seconds"]
        return out

    def transitions_checked(self, case: int, actions: list[str], assumed) -> dict[int, dict]:
        """The transition verdicts a previous run reached on the paths of ``case`` from the
        same ``assumed`` invariants: path number -> {property: None (holds there) or why it
        fails}.  A property z3 gave up on is not among them."""
        out: dict[int, dict] = {}
        for at, r in self._of_case("transition", case, actions, "assumed", assumed):
            out.setdefault(at, {}).update(r.get("verdicts") or {})
        return out

    def transition_case_done(self, case: int, assumed, properties) -> bool:
        """Whether a previous run found every one of ``properties`` holding on every path of
        ``case``, from the same ``assumed`` invariants (`record_transition_case`)."""
        names, props = sorted(assumed), set(properties)
        return any(r.get("kind") == "transition-case" and r.get("case") == case
                   and r.get("assumed") == names and props <= set(r.get("properties") or ())
                   for r in self.records)

    def record_transition_case(self, case: int, assumed, properties, paths: int) -> None:
        """Every path of ``case`` held each of ``properties``: a run that resumes does not
        build the case again for them (on a large board a case takes minutes to build, and
        the pass builds every case).  Not written when one failed, or z3 gave up on one,
        there."""
        self._append({"kind": "transition-case", "case": case, "assumed": sorted(assumed),
                      "properties": sorted(properties), "paths": paths})

    def _of_case(self, kind: str, case: int, actions: list[str], field: str, names) -> list:
        """(path number, record) for the records of ``kind`` and ``case`` whose ``field``
        holds ``names``; none at all when one of them is of another path than ``actions``
        says (the journal is then another run's)."""
        names = sorted(names)
        out = []
        for r in self.records:
            if r.get("kind", "step") != kind or r.get("case") != case or r.get(field) != names:
                continue
            at = r.get("path")
            if not isinstance(at, int) or not 0 <= at < len(actions) \
                    or actions[at] != r.get("action"):
                self.say(f"journal {self.path}: its paths are not this run's (path {at}): "
                         f"not used")
                return []
            out.append((at, r))
        return out

    def record_transition(self, case: int, at: int, action: str, assumed,
                          verdicts: dict, by: str | None = None) -> None:
        self._append({"kind": "transition", "case": case, "path": at, "action": action,
                      "assumed": sorted(assumed), "verdicts": verdicts,
                      **({"by": by} if by else {})})

    def _append(self, record: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _json_line(line: str):
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _pulled(items: list, jobs: int) -> list:
    """``jobs`` shares of ``items`` for `_forked`, each drawing the next item none has drawn
    yet (a counter in shared memory, which the forked children inherit): a worker dealt slow
    paths no longer runs alone while the others wait.  Dealt by turns ([j::2]), an action's
    paths that come slow and fast by turns all went slow to one worker: 80 paths in 3 minutes
    for one, 80 in some 40 minutes for the other."""
    import multiprocessing as mp
    try:
        counter = mp.get_context("fork").Value("q", 0)
    except ValueError:
        return [items]          # `_forked` then runs the shares one after the other

    def draw():
        while True:
            with counter.get_lock():
                i = counter.value
                counter.value += 1
            if i >= len(items):
                return
            yield items[i]
    return [draw() for _ in range(jobs)]


def _forked(fn, shares: list, say, meanwhile=None) -> list:
    """``fn`` over each share in its own forked child, at once: a Houdini round's paths are
    independent given the candidates, so the round's verdict is the union of the children's.
    Each child has a copy of the parent's z3 terms; what comes back is plain data.  A child
    that dies is an error, never a silent "proved".  ``meanwhile`` (no argument) runs in the
    parent while the children work: the next case's paths are built then, on a core that
    would otherwise wait (a case of a large step took one core two minutes to build)."""
    import multiprocessing as mp
    try:
        ctx = mp.get_context("fork")
    except ValueError:
        out = [fn(share) for share in shares]
        if meanwhile is not None:
            meanwhile()
        return out
    procs = []
    for j, share in enumerate(shares):
        recv, send = ctx.Pipe(duplex=False)

        def child(share=share, send=send, j=j):
            try:
                send.send(("ok", fn(share, say=lambda m: say(f"[{j + 1}/{len(shares)}] {m}"))))
            except BaseException as e:   # noqa: BLE001 - reported to the parent
                send.send(("error", f"{type(e).__name__}: {e}"))
            finally:
                send.close()
        p = ctx.Process(target=child, daemon=True)
        p.start()
        send.close()
        procs.append((p, recv))
    out = []
    try:
        if meanwhile is not None:
            meanwhile()
        for p, recv in procs:
            try:
                kind, value = recv.recv()
            except EOFError:
                p.join()
                raise RulebookError(f"a proof worker exited with status {p.exitcode}")
            if kind != "ok":
                raise RulebookError(f"a proof worker failed: {value}")
            out.append(value)
    finally:
        for p, recv in procs:
            if p.is_alive():
                p.kill()
            p.join()
            recv.close()
    return out


def _step_each(local, guard, goal, conj, name, items, readers, candidates, memo, split,
               timeout_ms):
    """`_step` for all the conjuncts of an invariant a path changes at once; when z3 gives up
    on them together, one conjunct at a time, each with its own nearby assumptions (fewer
    than those of all the conjuncts).  A path that rewrites a whole map (a count per key)
    changes one conjunct per key: z3 may give up on eighty of them together, and prove each
    alone in about a second.
    """
    try:
        return _step(local, guard, goal, conj, name, items, readers, candidates, memo, split,
                     timeout_ms)
    except Unknown:
        if len(items) == 1:
            raise
    for k, c2 in items:
        verdict = _step(local, guard, z3.Not(c2), conj, name, [(k, c2)], readers, candidates,
                        memo, split, timeout_ms)
        if verdict is not None:
            return verdict
    return None


# The tier of the conjuncts near the changed ones gets this long (ms): past it, the next tier.
MID_MS = 2_000

# With length splitting on, a step query first gets this long as one query (ms).
QUICK_MS = 2_000


def _step(local, guard, goal, conj, name, items, readers, candidates, memo, split, timeout_ms):
    """The tiers for one invariant on one path.  With ``split`` (prove's ``split_lengths``), a
    query of one conjunct that z3 gives up on within QUICK_MS is checked again case by case
    over the sequence lengths the step changes (_split_tiers), and the other paths of that
    action go there directly for that invariant; a query that cannot be split gets the whole
    step time-out.  A query of several conjuncts is only tried quickly, and left to
    `_step_each`, which takes them one at a time.

    A single conjunct is first rid of the terms of its sums that equal their previous
    versions whatever the values (`_same_terms`): a count of one value over a sequence that an
    item of another value was pushed onto is the same count, slot by slot.  Once that has
    found nothing on SAME_TERM_MISSES paths of an action, the conjunct is first checked as it
    is within QUICK_MS, and reduced only when z3 gives up on that (the reduction is only
    worth its cost, a second a conjunct on a path that rewrites a whole sequence, where it
    finds identities; the verdicts stay those with it).  An action where z3 gave up on more
    than half of such checks, SAME_TERM_MISSES at least, is reduced first again."""
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
        tally = memo.setdefault(("same-tally", split[4] if split else name), [0, 0, 0, 0])
        if hit is None and tally[1] >= SAME_TERM_MISSES and not (
                tally[3] >= SAME_TERM_MISSES and 2 * tally[3] > tally[2]):
            tally[2] += 1
            try:
                # None (proved), or a counterexample to the conjunct: one to its reduction
                # too (the same formula, some terms written otherwise).
                with _time_limit(local, min(QUICK_MS, timeout_ms), timeout_ms):
                    return _tiers(local, guard, goal, conj, name, items, readers, candidates,
                                  memo, None, min(QUICK_MS, timeout_ms))
            except Unknown:
                tally[3] += 1
        if hit is None:
            hit = memo[("same", c1.get_id(), c2.get_id())] = (c1, c2, _same_terms(c1, c2))
            tally[0 if not hit[2].eq(c2) else 1] += 1
        c3 = hit[2]
        if c3.eq(conj[name][k]):
            return None
        if not c3.eq(c2):
            items, goal, reduced = [(k, c3)], z3.Not(c3), True
    return _step_on(local, guard, goal, conj, name, items, readers, candidates, memo, split,
                    timeout_ms, reduced)


# `_same_terms` is skipped at first on the paths of an action where it found nothing on this
# many paths, unless the check without it gave up this many times (see `_step`).
SAME_TERM_MISSES = 3


def _step_on(local, guard, goal, conj, name, items, readers, candidates, memo, split,
             timeout_ms, reduced):
    """`_step` once the conjunct is reduced (``reduced``: it was)."""
    if not split:
        return _tiers(local, guard, goal, conj, name, items, readers, candidates, memo, None,
                      timeout_ms)
    lengths, moved, cache, learned, key = split
    if lengths is None:
        # No length splitting: several conjuncts are tried together briefly, then one at a
        # time (`_step_each`), and the action's later paths go one at a time directly.  A
        # path that rewrites a whole map (a count per key, all written at once) changes
        # eighty conjuncts: together they cost the whole time-out each path, one at a time
        # a few milliseconds each.
        if len(items) == 1:
            return _tiers(local, guard, goal, conj, name, items, readers, candidates, memo,
                          None, timeout_ms)
        if key in learned:
            raise Unknown("one conjunct at a time")
        try:
            with _time_limit(local, min(QUICK_MS, timeout_ms), timeout_ms):
                return _tiers(local, guard, goal, conj, name, items, readers, candidates,
                              memo, None, min(QUICK_MS, timeout_ms))
        except Unknown:
            learned.add(key)
            raise
    if len(items) > 1 and key in learned:
        # Split, many conjuncts make many cases each: _step_each takes them one at a time.
        raise Unknown("split one conjunct at a time")
    if key not in learned or reduced:
        quick = min(QUICK_MS, timeout_ms)
        try:
            with _time_limit(local, quick, timeout_ms):
                return _tiers(local, guard, goal, conj, name, items, readers, candidates, memo,
                              None, quick)
        except Unknown:
            if len(items) > 1:
                raise       # one at a time first: each alone is often proved without a split
    try:
        verdict = _split_tiers(local, guard, conj, name, items, readers, candidates, memo,
                               lengths, moved, cache, key)
        learned.add(key)
        return verdict
    except TooManyCases:
        return _tiers(local, guard, goal, conj, name, items, readers, candidates, memo, None,
                      timeout_ms)


def _tiers(local, guard, goal, conj, name, items, readers, candidates, memo, full, local_ms):
    """Prove ``guard -> not goal`` from growing sets of assumptions; return None when proved,
    else a model of a counterexample to induction (from the full set of assumptions).
    ``local_ms``: the time limit the ``local`` solver is set to."""
    own = [conj[name][k] for k, _ in items if k < len(conj[name])]
    if regionfacts.on() and len(items) == 1 and _sliced_proof(local, guard, goal, own, memo,
                                                                local_ms):
        return None
    if _check_assume(local, z3.And(guard, goal, *own)) is None:
        return None
    if len(items) == 1 and len(own) == 1 and _congruent(
            local, guard, own[0], items[0][1], conj, readers, candidates, memo, local_ms):
        return None
    # Then, within a short time each, the conjuncts about the same few things as the changed
    # ones (those that read their rarely read variables: the same key's count kept by
    # another invariant), then all that read what they read, before or after the step (a
    # count kept by its own conjunct and by another that bounds the same entries): the
    # path's guard alone often reads many more.
    with _time_limit(local, min(MID_MS, local_ms), local_ms):
        for pick in (_rare, _near):
            try:
                if _check_assume(local, z3.And(guard, goal, *own, *pick(
                        z3.And(goal, *own), conj, readers, candidates, memo))) is None:
                    return None
            except Unknown:
                pass
    model = _check_assume(local, z3.And(guard, goal,
                                        *_near(z3.And(guard, goal), conj, readers, candidates, memo)))
    if model is None or full is None:
        return model
    return _check_assume(full(), z3.And(guard, goal))


def _sliced_proof(local, guard, goal, own, memo, local_ms) -> bool:
    """Under the region facts, whether one conjunct is proved from the facts about its own
    squares, the guard's and those around the change alone (`regionfacts.sliced`), within
    QUICK_MS.  On a large grid all the facts of a step are tens of thousands, most about
    squares the conjunct does not name: a bound on one square's column needs its own rows,
    not every other square's.  Fewer assumptions: a proof under them is a proof; anything
    else decides nothing (the full query follows)."""
    key = ("guard-squares", guard.get_id())
    hit = memo.get(key)
    if hit is None or not hit[0].eq(guard):
        hit = memo[key] = (guard, regionfacts.squares_in([guard]))
    squares = hit[1] | regionfacts.squares_in([goal, *own])
    try:
        with regionfacts.sliced(squares), _time_limit(local, min(QUICK_MS, local_ms),
                                                        local_ms):
            return _check_assume(local, z3.And(guard, goal, *own)) is None
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
            return _check_assume(local, z3.And(guard, goal, *_near(
                z3.And(guard, goal), conj, readers, candidates, memo))) is not None
        except Unknown:
            return None
    with _time_limit(local, min(CONGRUENCE_MS, local_ms), local_ms):
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


# `_congruent` asks of this many arguments at once whether one differs, then, if z3 gives up,
# of each; each query gets this long (ms).
CONGRUENCE_GROUP = 24
CONGRUENCE_MS = 5_000


def _same_terms(old, new):
    """``new`` (``old`` after a step's substitution) with each term of its sums that equals the
    same term of ``old`` for every value of the variables put back as it was.  The two are
    walked together (``new`` has ``old``'s shape); a sum's differing terms are checked at
    once, then one by one when some differ (a z3 query each, with no assumption: an identity,
    like a slot that a push wrote only past the count's length)."""
    pairs: list = []
    stack = [(old, new)]
    while stack:
        a, b = stack.pop()
        if a.eq(b) or not (z3.is_app(a) and z3.is_app(b)) or a.num_args() != b.num_args() \
                or not a.decl().eq(b.decl()):
            continue
        if z3.is_add(a):
            for x, y in zip(a.children(), b.children()):
                if x.eq(y):
                    continue
                if z3.is_add(x) and z3.is_add(y):
                    stack.append((x, y))
                elif z3.is_arith(x) and z3.is_arith(y):
                    pairs.append((x, y))
        else:
            stack.extend(zip(a.children(), b.children()))
    if len(pairs) < 2:
        return new      # a lone differing term is the change itself
    # Whether some of the pairs differ; a model where they do rules out each pair it tells
    # apart, and the question is asked again of the rest, until none differ (identities) or
    # none are left.  Most steps change every term (a whole map dealt afresh), and one
    # model then settles them all.
    untold = _untold(pairs)
    solver = _same_solver() if untold else None
    # The solver lives in a context of its own: in the prover's, which holds the whole step,
    # each check costs some 200 ms, and a sum whose terms differ on exclusive conditions
    # (the position a write goes to) takes a model per term.
    ported = [(x.translate(solver.ctx), y.translate(solver.ctx)) for x, y in untold]
    same, rest = [], list(range(len(untold)))
    while rest:
        solver.reset()
        solver.add(z3.Or([ported[i][0] != ported[i][1] for i in rest]))
        verdict = solver.check()
        if verdict == z3.unsat:
            same = rest
            break
        if verdict != z3.sat:
            # z3 gave up on them together: one at a time, until it gives up SAME_TERM_GIVE_UPS
            # times.  The terms of one sum are built alike (a count over a sequence's slots
            # filtered by an `exists real` predicate), and z3 then gives up on each: 37 such
            # terms cost 7.5 s a conjunct on a path, to learn nothing.
            gave_up = 0
            for i in rest:
                solver.reset()
                solver.add(ported[i][0] != ported[i][1])
                answer = solver.check()
                if answer == z3.unsat:
                    same.append(i)
                elif answer != z3.sat:
                    gave_up += 1
                    if gave_up >= SAME_TERM_GIVE_UPS:
                        break
            break
        model = solver.model()
        rest = [i for i in rest if not z3.is_false(
            model.eval(ported[i][0] == ported[i][1], model_completion=True))]
    if not same:
        return new
    return z3.substitute(new, *[(untold[i][1], untold[i][0]) for i in same])


# Each identity `_same_terms` asks gets this long (ms); past this many it gives up on, one
# at a time, the rest of the terms are left as they are (no identity is assumed).
SAME_TERM_MS = 200
SAME_TERM_GIVE_UPS = 2
# Assignments `_untold` tries before `_same_terms` asks z3, and the integers it draws from.
SAME_TERM_TRIES = 8
SAME_TERM_INTS = (0, 1, 2)


def _untold(pairs: list) -> list:
    """The pairs of terms that a few seeded assignments of their variables do not tell apart,
    each term evaluated by z3's simplifier (no solver): only those may be identities.  A pair
    that differs under one assignment is no identity, and asking the solver costs some 20 ms a
    query once the context holds a large step (a count over 64 squares after a move)."""
    consts, funs = _symbols(pairs)
    consts = [c for c in consts if c.sort().kind() in (z3.Z3_BOOL_SORT, z3.Z3_INT_SORT)]
    # The uninterpreted functions (an `exists real` predicate, an opaque fixpoint) are read as
    # constant functions, a value drawn for each: an interpretation like any other, so a pair
    # it tells apart is no identity either.  Without it a count filtered by such a predicate
    # had no value, and each of its terms went to the solver.
    funs = [f for f in funs if f.range().kind() in (z3.Z3_BOOL_SORT, z3.Z3_INT_SORT)]
    if not consts and not funs:
        return pairs
    ctx = pairs[0][0].ctx
    frm = (z3.Ast * len(consts))(*[c.as_ast() for c in consts])
    rng = random.Random(0)

    def draw(sort):
        if sort.kind() == z3.Z3_BOOL_SORT:
            return z3.BoolVal(rng.random() < 0.5, ctx)
        return z3.IntVal(rng.choice(SAME_TERM_INTS), ctx)

    def value(t, to, bodies):
        if bodies:
            t = z3.substitute_funs(t, *bodies)
        v = z3.simplify(_expr_ref(z3.Z3_substitute(ctx.ref(), t.as_ast(), len(consts), frm, to),
                                  ctx))
        return v if z3.is_int_value(v) or z3.is_true(v) or z3.is_false(v) else None

    rest = pairs
    for _ in range(SAME_TERM_TRIES):
        vals = [draw(c.sort()) for c in consts]
        to = (z3.Ast * len(consts))(*[v.as_ast() for v in vals])
        bodies = [(f, draw(f.range())) for f in funs]
        keep = []
        for x, y in rest:
            a, b = value(x, to, bodies), value(y, to, bodies)
            if a is None or b is None or a.eq(b):
                keep.append((x, y))
        rest = keep
        if not rest:
            break
    return rest


_SAME: list = []


def _same_solver():
    """The solver `_same_terms` asks, made once (per process) in a z3 context of its own, and
    reset before each query: in the prover's context, once it holds a large step's terms, a
    new solver's first check costs some 20 ms and each check of a few small terms 200 ms."""
    if not _SAME:
        s = z3.Solver(ctx=z3.Context())
        s.set("timeout", SAME_TERM_MS)
        _SAME.append(s)
    return _SAME[0]


# A variable that at most this many conjuncts read is rare: a conjunct that reads one of the
# goal's rare variables is about the same few things (one key's count, kept by two
# invariants), where one that shares only common variables (a sequence's slots, which every
# count over that sequence reads) need not be.
RARE_READERS = 4
# A conjunct that reads more rare variables than this (a total over a whole map) is not
# followed further: every conjunct about an entry of that map would come with it.
HUB_RARE = 12


def _rare(formula, conj, readers, candidates, memo) -> list:
    """The conjuncts of the candidate invariants that read a rare variable of ``formula``, and
    those that read a rare variable of one of these that is not a hub: a conservation law
    needs the same entry's count from another invariant, and, two steps away, what bounds an
    entry of it (an empty hand in this phase)."""
    def rare(vs):
        return {v for v in vs if len(readers.get(v, ())) <= RARE_READERS}
    frontier = rare(_free_vars(formula, memo))
    seen = set(frontier)
    chosen: dict = {}
    for _ in range(2):
        nxt: set = set()
        for v in frontier:
            for nk in readers.get(v, ()):
                n, k = nk
                if nk in chosen or n not in candidates or k >= len(conj[n]):
                    continue
                chosen[nk] = conj[n][k]
                more = rare(_free_vars(conj[n][k], memo))
                if len(more) <= HUB_RARE:
                    nxt |= more - seen
        seen |= nxt
        frontier = nxt
    return list(chosen.values())


def _near(formula, conj, readers, candidates, memo) -> list:
    """The conjuncts of the candidate invariants that read a variable ``formula`` reads."""
    near = {nk for v in _free_vars(formula, memo) for nk in readers.get(v, ())
            if nk[0] in candidates}
    return [conj[n][k] for n, k in near if k < len(conj[n])]


# At most this many cases when a step query is split over sequence lengths.
SPLIT_CASES = 600


def _seq_lengths(S) -> dict:
    """The length constants of the symbolic sequences of a state: id -> (constant, capacity,
    depth), depth 0 for a sequence of the state itself, 1 for one inside it (a sequence in a
    sequence of sequences), and so on."""
    out = {}
    stack = [(S, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dz.SymSeq):
            if dz.is_sym(v.length):
                out[v.length.get_id()] = (v.length, len(v.slots), d)
            stack.extend((x, d + 1) for x in v.slots)
        elif isinstance(v, tuple):
            stack.extend((x, d) for x in v)
    return out


def _cases_of(split, lengths) -> int:
    return math.prod(lengths[i][1] + 1 for i in split)


class TooManyCases(Exception):
    """A step query that would split into more than SPLIT_CASES cases (or has none to split)."""


# A quick tier of `_split_tiers` (the case without the guard, then with it) that has proved
# fewer than one in TIER_SKIP_RATE of its first TIER_SKIP_AFTER cases of an (action,
# invariant) is no longer asked on that action's later paths: each case goes to the nearby
# conjuncts directly.  A conservation law over sequences needs the other invariants' counts
# of the same item on every case of the paths that change the actor, where the two quick
# tiers were more than half the time (and fetching the models of their failures an eighth).
TIER_SKIP_AFTER = 40
TIER_SKIP_RATE = 20


def _split_tiers(local, guard, conj, name, items, readers, candidates, memo, lengths,
                 changed_lengths, cache, key=None):
    """The tiers again, for one changed conjunct at a time and with the lengths of the
    sequences it reads fixed, case by case.  A conjunct that counts the items of a sequence is
    a sum of one `if` per slot of it, which z3 often gives up on when the step moves the
    sequence's length; once the length is a number it simplifies each slot to the item or to
    nothing, and each case takes milliseconds.  The lengths split are those of the new
    conjunct that the step changes or that it reads afresh (a length read alike before and
    after cancels out), and those the guard reads with them.  Raises TooManyCases when there
    is nothing to split or the cases are too many: the caller then uses the usual tiers.

    ``cache`` holds the (simplified) case queries already proved: an item pushed by any of
    the paths of an action gives the same query, which z3 then answers once.  A query is the
    whole formula checked, assumptions included, so a cached proof never outlives them.
    It also keeps, per ``key`` (action, invariant), how often each quick tier proved a case.
    """
    import itertools
    tried = cache.setdefault(("tiers", key), [[0, 0], [0, 0]])     # [asked, proved] each

    def quick(tier, q) -> bool:
        """Whether the quick tier proves ``q`` (False too when it is no longer asked)."""
        asked, proved = tried[tier]
        if asked >= TIER_SKIP_AFTER and proved * TIER_SKIP_RATE < asked:
            return False
        tried[tier][0] += 1
        if _unsat(local, q):
            tried[tier][1] += 1
            cache[q.get_id()] = q                   # keeps the term (and its id) alive
            return True
        return False
    plans = []
    for k, c2 in items:
        own = conj[name][k] if k < len(conj[name]) else z3.BoolVal(True)
        fo, fn = _free_vars(own, memo), _free_vars(c2, memo)
        split = (fn & lengths.keys()) & (changed_lengths | (fn - fo))
        if split and _cases_of(split, lengths) > SPLIT_CASES:
            # A new sequence pushed onto a sequence of sequences moves every inner one's
            # slots: fixing the outer length alone puts the new one in one place, and the
            # others then read alike before and after.
            top = min(lengths[i][2] for i in split)
            split = {i for i in split if lengths[i][2] == top}
        if split:
            more = split | (_free_vars(guard, memo) & lengths.keys() & (fo | fn))
            if _cases_of(more, lengths) <= SPLIT_CASES:
                split = more
        split = sorted(split)
        if not split or _cases_of(split, lengths) > SPLIT_CASES:
            raise TooManyCases
        plans.append((k, c2, own, split))
    for k, c2, own, split in plans:
        consts = [lengths[i][0] for i in split]
        near = None
        for vals in itertools.product(*[range(lengths[i][1] + 1) for i in split]):
            sub = [(c, z3.IntVal(v)) for c, v in zip(consts, vals)]
            g2 = z3.simplify(z3.substitute(guard, *sub))
            if z3.is_false(g2):
                continue
            goal = z3.simplify(z3.Not(z3.substitute(c2, *sub)))
            if z3.is_false(goal):
                continue
            own2 = z3.simplify(z3.substitute(own, *sub))
            q = z3.And(goal, own2)                  # without the guard: true of every path
            if q.get_id() in cache or quick(0, q):
                continue
            q = z3.And(g2, goal, own2)
            if q.get_id() in cache or quick(1, q):
                continue
            if near is None:
                # The conjuncts about the same few things first (`_rare`), then all near.
                near = [z3.And(*pick(about, conj, readers, candidates, memo) or [z3.BoolVal(True)])
                        for pick, about in ((_rare, z3.And(c2, own)), (_near, z3.And(guard, c2)))]
            for i, around in enumerate(near):
                q = z3.And(g2, goal, own2, z3.simplify(z3.substitute(around, *sub)))
                if q.get_id() in cache:
                    break
                try:
                    model = _check_assume(local, q)
                except Unknown:
                    if i + 1 < len(near):
                        continue
                    raise
                if model is None:
                    cache[q.get_id()] = q
                    break
                if i + 1 == len(near):
                    return model
    return None


def _valid(formula, bounds) -> bool:
    """Whether z3 proves ``formula`` true under the state's ``bounds`` alone within QUICK_MS
    (giving up counts as not proved)."""
    if z3.is_true(z3.simplify(formula)):
        return True
    solver = make_solver(QUICK_MS)
    solver.add(*bounds, z3.Not(formula))
    return solver.check() == z3.unsat


@contextlib.contextmanager
def _time_limit(solver, ms: int, back: int):
    """The solver's time limit set to ``ms`` within the ``with``, and back to ``back`` after."""
    solver.set("timeout", ms)
    try:
        yield
    finally:
        solver.set("timeout", back)


@contextlib.contextmanager
def _assuming(solver, goal):
    """``goal`` asserted in a scope of its own, popped on leaving."""
    solver.push()
    solver.add(goal)
    try:
        yield
    finally:
        solver.pop()


def _unsat(solver, goal) -> bool:
    """Whether ``goal`` is unsatisfiable under the solver's assertions (a model is not
    fetched: for a large formula that costs as much as a quick check)."""
    with _assuming(solver, goal):
        return not check(solver)


def _check_assume(solver, goal):
    """Check ``goal`` under the solver's assertions; return None when unsat, else a model
    (read before the scope is popped, after which z3 no longer has it)."""
    with _assuming(solver, goal):
        return solver.model() if check(solver) else None


def _describe_cti(game: Game, b, model, S) -> str:
    a = game.action(b.action)
    params = tuple(dz.concretize(p.domain.elem, v, model) for p, v in zip(a.ir.params, b.params))
    return f"a state satisfying the invariants where {Move(b.action, params).label(game)} breaks it"


def _transitions(game: Game, trans: list[ir.Invariant], assumed: set[str], timeout_ms: int, say,
                 split: bool = False, split_on=(), jobs: int = 1, journal=None,
                 symmetric=None) -> dict:
    """Each transition property on every action path, from the invariants proved inductive
    (``assumed``): name -> (True, "") or (False, why).  A path is checked as Houdini checks
    one (`_step_each`): the post-state conjuncts the path does not make trivially true, all
    at once, then one at a time, each from the invariants' conjuncts near it, and with
    ``split`` case by case over the sequence lengths the step changes.  Before that, every
    invariant at once is asked briefly (QUICK_MS), until it gives up on a path of that
    action; what the tiers do not prove is asked from every invariant at once again, with
    the whole time-out (a model there is a counterexample to induction).  The "previous
    version" of a transition's conjunct is the conjunct over a step that changes nothing, a
    tautology.  With ``jobs`` over 1 the paths are shared out among forked processes; why a
    property fails is said of the first path that breaks it.  A `Journal` records each
    path's decided verdicts, and gives back those a previous run decided under the same
    assumed invariants; a case where every path held every property is recorded whole, and
    a resumed run does not build it again."""
    t = game.state_type
    fresh = dz.Fresh("t_")
    fields = _split_fields(game, split_on)
    invs = [i for i in game.p.invariants if not i.transition and i.name in assumed]
    names = [i.name for i in invs]
    out = {tr.name: (True, "") for tr in trans}
    # One case per value of the split fields (the actor's), before and after the move, as
    # for the invariants: a move then writes only the actor's part of the state.
    cases = _cases(game, fresh, "s", fields)
    # A copy of each case stands for the state after the move: each property is evaluated
    # once over (case, copy), and a path's post-state conjuncts are that template with the
    # copy's leaves replaced by the path's successor.  Evaluating a property afresh on each
    # path was most of the time of some checks (a count per key over nested sequences).
    after = _cases(game, dz.Fresh("n_"), "n", fields)
    # The solver for linear integer arithmetic, not the general one Houdini's step uses:
    # measured on two games' transition properties (every path, the invariants assumed),
    # the general one took 10 % more CPU time (99 s against 90 s; 593 s against 533 s).
    local = make_solver(timeout_ms)
    local.add(*fresh.constraints)       # the state's bounds, made with the cases
    split_memo: dict = {}
    learned: set = set()
    hard: set = set()       # (action, property) that every invariant at once did not settle
    def prepare(ci: int):
        """Case ``ci``'s invariant conjuncts, each property's template over (case, copy) and
        which of its conjuncts are reflexive, and the action paths; None when no state of
        the case satisfies the invariants."""
        S, N = cases[ci], after[ci]
        conj = {i.name: _conjuncts(game.holds_symbolic(i, S)) for i in invs}
        if any(z3.is_false(c) for cs in conj.values() for c in cs):
            return None
        memo: dict[int, tuple] = {}
        readers, _ = _readers(conj, memo)
        template = {tr.name: _conjuncts(game.holds_symbolic(tr, N, old=S)) for tr in trans}
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
            ident = [_substitute(c, [to_s[i] for i in _free_vars(c, memo) if i in to_s])
                     for c in template[tr.name]]
            reflexive[tr.name] = {k for k, c in enumerate(ident)
                                  if _valid(c, fresh.constraints)}
            conj[tr.name] = [c if k in reflexive[tr.name] else z3.BoolVal(True)
                             for k, c in enumerate(ident)]
        bs = [b2 for b in branches(game, S) for b2 in _split_after(game, b, fields)]
        return conj, memo, readers, template, reflexive, n_leaves, bs

    def done_before(ci: int, live: list) -> bool:
        return journal is not None and journal.transition_case_done(
            ci, names, [tr.name for tr in live])

    def prepare_next(ci: int, live: list):
        """What prepares, in `ready`, the next case after ``ci`` the pass will check (one a
        previous run did not finish); None when there is none.  Run in the parent while the
        workers check case ``ci``: building a large case's paths takes one core minutes,
        with the other cores idle."""
        cj = _next_case(len(cases), ci, lambda cj: done_before(cj, live))
        return None if cj is None else lambda: ready.setdefault(cj, prepare(cj))

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
                    post = _conjuncts(game.holds_symbolic(tr, b.state, old=S))
                else:
                    # A conjunct that reads no leaf the path changes is the property across
                    # a step that changes nothing: true when that is (reflexive).
                    post = [None if k in reflexive[tr.name]
                            and not (_free_vars(c, memo) & changed) else
                            _substitute(c, [onto_by_id[i] for i in _free_vars(c, memo)
                                            if i in onto_by_id])
                            for k, c in enumerate(template[tr.name])]
                out[tr.name] = [(k, c) for k, c in enumerate(post)
                                if c is not None and not z3.is_true(z3.simplify(c))]
            return out

        return post_of

    first_case: list = []       # the first case's (prepared, post_of), once made

    def rotated(ci: int, prepared: tuple, post_of, paths: list, live: list, done: dict):
        """``paths`` of case ``ci`` but those that follow from the first case's path of the
        same action and parameters, the players numbered anew (`_rotate_from_first`); a
        path a previous run decided is left to `check_share`, which reads its verdicts."""
        if not first_case:
            p0 = prepare(0)
            first_case.append(None if p0 is None else (p0, posts_of(0, p0)))
        if first_case[0] is None:
            return paths
        p0, post0 = first_case[0]
        decided = {at for at, _ in paths if all(tr.name in done.get(at, {}) for tr in live)}

        def goals(prep, post):
            return _Goals(prep[6], lambda b: (b, [c for cs in post(b, live).values()
                                                  for _, c in cs]))

        def note(at, b, sym, at0):
            if journal is not None:
                journal.record_transition(ci, at, b.action, names,
                                          {tr.name: None for tr in live},
                                          f"{sym.name} of case 1 path {at0}")
        rest = _rotate_from_first(
            symmetric, "transitions", ci, fields, (cases[0], p0[6], goals(p0, post0)),
            (cases[ci], prepared[6], goals(prepared, post_of)),
            [(at, b) for at, b in paths if at not in decided],
            ([c for n in names for c in p0[0][n]], [c for n in names for c in prepared[0][n]]),
            fresh.constraints, note, say, jobs)
        kept = {at for at, _ in rest}
        return [(at, b) for at, b in paths if at in decided or at in kept]

    ready: dict[int, tuple | None] = {}
    for ci, (S, N) in enumerate(zip(cases, after)):
        live = [tr for tr in trans if out[tr.name][0] is True]
        if not live:
            break
        if done_before(ci, live):
            say(f"transitions: case {ci + 1} of {len(cases)}: every path held in a previous "
                f"run (journal {journal.path})")
            continue
        prepared = ready.pop(ci) if ci in ready else prepare(ci)
        if prepared is None:
            continue        # no state of this case satisfies the invariants
        conj, memo, readers, template, reflexive, n_leaves, bs = prepared
        lengths = _seq_lengths(S)
        say(f"transitions: {len(bs)} action paths, {len(live)} properties"
            + (f" (case {ci + 1} of {len(cases)})" if len(cases) > 1 else ""))
        done = {} if journal is None else \
            journal.transitions_checked(ci, [b.action for b in bs], names)
        if done:
            say(f"transitions: {len(done)} of {len(bs)} paths decided by a previous run "
                f"(journal {journal.path})")

        post_of = posts_of(ci, prepared)
        if ci == 0:
            first_case[:] = [(prepared, post_of)]

        def check_share(share, say=say, S=S, N=N, conj=conj, readers=readers, memo=memo,
                        lengths=lengths, live=live, done=done, ci=ci):
            failed: dict[str, tuple] = {}
            # With a journal, a property z3 gave up on is still checked on the later paths:
            # their verdicts are recorded for the next run, which then asks z3 again only
            # about the paths given up on.
            gave_up: dict[str, tuple] = {}
            whole = make_solver(timeout_ms)
            whole.add(*fresh.constraints, *[c for cs in conj.values() for c in cs])
            for count, (at, b) in enumerate(share, 1):
                if count % 100 == 0:
                    say(f"transitions: {count} paths checked")
                # What a previous run decided on this path; a path decided whole is skipped.
                prior = {tr.name: done[at][tr.name] for tr in live
                         if tr.name in done.get(at, {})}
                for n, why in prior.items():
                    if why is not None:
                        failed.setdefault(n, (at, why))
                if all(tr.name in failed or tr.name in prior for tr in live):
                    continue
                decided: dict[str, str | None] = {}     # held (None) or why it fails
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
                            with _time_limit(whole, min(QUICK_MS, timeout_ms), timeout_ms):
                                model = _check_assume(whole, z3.And(guard, goal))
                            if model is not None:
                                failed[tr.name] = (at, _describe_cti(game, b, model, S))
                                decided[tr.name] = failed[tr.name][1]
                            continue
                        except Unknown:
                            hard.add((b.action, tr.name))   # its other paths: tiers first
                    try:
                        if _step_each(local, guard, goal, conj, tr.name, items, readers,
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
                        model = _check_assume(whole, z3.And(guard, goal))
                    except Unknown:
                        # A time-out depends on the machine's load: not journalled.
                        del decided[tr.name]
                        why = (at, f"z3 gave up on the inductive step (a path of "
                                   f"{b.action}, {timeout_ms / 1000:g} s per query)")
                        if journal is None:
                            failed[tr.name] = why
                        else:
                            gave_up.setdefault(tr.name, why)
                        continue
                    if model is not None:
                        failed[tr.name] = (at, _describe_cti(game, b, model, S))
                        decided[tr.name] = failed[tr.name][1]
                if journal is not None and decided:
                    journal.record_transition(ci, at, b.action, names, decided)
            # A counterexample (rank 0) says more than a time-out (rank 1).
            return {**{n: (1, *w) for n, w in gave_up.items()},
                    **{n: (0, *w) for n, w in failed.items()}}
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

        def run(paths, ci=ci, live=live):
            if jobs > 1:
                parts.extend(_forked(check_share, _pulled(paths, jobs), say,
                                     prepare_next(ci, live)))
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
            goals = _Goals(bs, goal_of)
            rest = _mirror_all(symmetric, ("transitions", ci), goals,
                               [(at, goals[at]) for at, _ in later], orbs,
                               [c for n in names for c in conj[n]], fresh.constraints,
                               note, say, jobs)
            if rest:
                run([(at, bs[at]) for at in rest])
        first: dict[str, tuple] = {}
        for part in parts:
            for n, w in part.items():
                first[n] = min(first.get(n, w), w)
        for n, (_, _, why) in first.items():
            out[n] = (False, why)
        if journal is not None and not first:
            journal.record_transition_case(ci, names, [tr.name for tr in live], len(bs))
    return out


def _bmc(game: Game, invs: list[ir.Invariant], depth: int, timeout_ms: int, say) -> list[Result]:
    """Check the invariants on every state reachable in at most ``depth`` moves."""
    init = game.initial()
    out = []
    t0 = time.perf_counter()
    u = unroll(game, init, depth, None, prefix="b")
    for inv in invs:
        start = time.perf_counter()
        kind = "transition" if inv.transition else "invariant"
        solver = make_solver(timeout_ms)
        solver.add(*u.constraints)
        if inv.transition:
            bad = _transition_violation(game, inv, u)
        else:
            bad = z3.Not(dz.lift(u.final(lambda st: game.holds_symbolic(inv, st))))
        solver.add(bad)
        try:
            found = check(solver)
        except Unknown:
            out.append(Result(inv.name, kind, "unknown", depth, "z3 gave up",
                              seconds=time.perf_counter() - start))
            continue
        if not found:
            out.append(Result(inv.name, kind, "holds", depth,
                              seconds=time.perf_counter() - start + (start - t0)))
            continue
        moves = read_moves(game, u, solver.model())
        trace, k = _replay_violation(game, inv, moves)
        out.append(Result(inv.name, kind, "refuted", k, "violated after the trace", trace,
                          seconds=time.perf_counter() - start))
    return out


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
