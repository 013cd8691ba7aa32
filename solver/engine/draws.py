"""A playout's uniform random move among thousands of candidates, drawn lazily (`Game._draw`).

The candidates are the instances of the open actions, one list after another; a draw is
``i = rng.randrange(n); n -= 1; pick cands[i]; cands[i] = cands[n]`` until a candidate is
legal.  Here the same random calls give the same picks, without building the list (only the
positions swapped so far are kept, as in `instances.Shuffle`, or, over fixed products, a copy
of the positions per draw) and, in a long draw, without looking at most of the refused
candidates: an action whose guard first checks its first parameter alone (a move's piece must
be the player's) has that verdict kept per value (and per value of the state fields it
reads, from one state to the next, or, for a check ``F[p] == e``, all of them computed at
once from the field's entries: `first_column`), and when every open action ranges over
fixed products, a map from positions to those values is built once per set of open actions,
so that a candidate whose first value failed is passed over with two list reads; one that
passed runs the rest of its guard without that check.  The requires right after the first
check that read no other field (`static_prefix`: a piece must fit a fixed space) are
decided for every candidate at once when the draw first meets a value of those fields, and
the two verdicts kept together, a byte per position, per value: a candidate that failed either
is then passed over with one read.
`randrange` is inlined for a plain `random.Random` (the same getrandbits calls).
"""
from __future__ import annotations

import random
from bisect import bisect_right

from ..lang import ir
from ..lang.errors import EvalError
from ..lang.irwalk import nodes
from ..lang.types import MapT, SeqT, finite
from .evaluate import Refused
from .fixinc import state_fields
from .instances import SHORT
from .memo import DefMemo


class Cache:
    """What the draws of one list of actions keep (the caller holds it): the position maps,
    per tuple of open actions (False where one ranges over state-dependent values), and
    each action's first verdicts, per value of the fields they read."""

    __slots__ = ("layouts", "firsts")

    def __init__(self):
        self.layouts: dict = {}
        self.firsts: dict = {}


def uniform(st, rng: random.Random, actions: list, cache: Cache):
    """``(action, params, successor)`` of a uniformly random legal instance of ``actions``
    (the open actions, in order), or None."""
    key = tuple(actions)
    layouts = cache.layouts
    lay = layouts.get(key)
    if lay is None:
        lay = layouts[key] = _Layout(actions, cache.firsts) \
            if all(a.fixed is not None for a in actions) else False
    if lay:
        if lay.n <= SHORT:
            return _short(st, rng, [(a, p) for a, ps in lay.groups for p in ps])
        return _lazy_fixed(st, rng, lay)
    groups = [(a, a.fixed if a.fixed is not None else a.instances(st)) for a in actions]
    n = sum([len(ps) for _, ps in groups])
    if n <= SHORT:
        return _short(st, rng, [(a, p) for a, ps in groups for p in ps])
    return _lazy(st, rng, groups, n)


def _randbelow(rng: random.Random):
    """``rng.getrandbits`` when ``rng.randrange(n)`` is Random's own (n.bit_length() bits,
    drawn again while not below n: the callers inline it, with the same calls); else None."""
    return rng.getrandbits if type(rng) is random.Random else None


def _short(st, rng, cands: list):
    n = len(cands)
    bits = _randbelow(rng)
    while n:
        if bits is not None:
            w = n.bit_length()
            i = bits(w)
            while i >= n:
                i = bits(w)
        else:
            i = rng.randrange(n)
        n -= 1
        a, params = cands[i]
        cands[i] = cands[n]
        env = [None] * a.frame          # `successor`, inlined
        if a.slot0 is not None:
            env[a.slot0] = params[0]
        else:
            for (slot, _), v in zip(a.domains, params):
                env[slot] = v
        pre = a.guard_check
        if pre is not None and not pre(st, env):
            continue
        try:
            return a, params, a.rest(st, env, None)
        except Refused:
            continue
    return None


def _lazy(st, rng, groups: list, n: int):
    """The lazy draw over instances that may depend on the state (`instances.Shuffle`,
    inlined); first verdicts kept per group and value."""
    starts, ends, m = [], [], 0
    for _, ps in groups:
        starts.append(m)
        m += len(ps)
        ends.append(m)
    moved: dict = {}
    get = moved.get
    firsts = [{} if a.first_test is not None else None for a, _ in groups]
    bits = _randbelow(rng)
    while n:
        if bits is not None:
            w = n.bit_length()
            i = bits(w)
            while i >= n:
                i = bits(w)
        else:
            i = rng.randrange(n)
        n -= 1
        k = get(i, i)
        moved[i] = get(n, n)
        g = bisect_right(ends, k)
        a, ps = groups[g]
        params = ps[k - starts[g]]
        fs = firsts[g]
        if fs is not None:
            v = fs.get(params[0])
            if v is None:
                v = fs[params[0]] = first_verdict(a, st, params[0])
            if v == FAILS:
                continue        # its guard would stop at that check
            st2 = successor_past_first(a, st, params) if v == PASSES else \
                successor(a, st, params)
        else:
            st2 = successor(a, st, params)
        if st2 is not None:
            return a, params, st2
    return None


class _Layout:
    """The candidates of a tuple of actions over fixed products: where each action's
    instances start and end, and for each position the id of its first value's verdict (0:
    the action has no first check; ids from 1 on: one per action and first value)."""

    __slots__ = ("groups", "starts", "ends", "n", "fid", "nf", "first", "segments", "base",
                 "spans", "static")

    def __init__(self, actions: list, firsts: dict):
        self.groups = [(a, a.fixed) for a in actions]
        starts, ends, fid, m = [], [], [], 0
        first = [None]                      # id -> (action, first value)
        self.segments = []                  # (the action's verdict memo, first id, count)
        self.spans = []                     # (verdict memo, start, end): position verdicts
        for a, ps in self.groups:
            starts.append(m)
            m += len(ps)
            ends.append(m)
            if a.first_test is None or not ps:
                fid.extend([0] * len(ps))
                continue
            # A fixed product lists the first parameter outermost: runs of equal values,
            # all as long (the product of the other domains' sizes).
            width = 1
            while width < len(ps) and ps[width][0] == ps[0][0]:
                width += 1
            runs = range(0, len(ps), width)
            if len(ps) % width or any(ps[j][0] != ps[j + width - 1][0] for j in runs):
                runs, width = range(len(ps)), 1         # not a product: one id a candidate
            base = len(first)
            for j in runs:
                first.append((a, ps[j][0]))
                fid.extend([len(first) - 1] * width)
            col = a.first_column
            if col is not None:
                field, fe, negated, index = col
                values = [x for _, x in first[base:]]
                if all(x in index for x in values):
                    # Every verdict at once, from the field's entries (see `first_column`).
                    ords = tuple(index[x] for x in values)
                    self.segments.append((None, base, len(ords), (field, fe, negated, ords, a)))
                    continue
            memo = firsts.get(a)
            if memo is None:
                # A first check depends on the state only through the fields it reads (the
                # pieces, whose turn it is): its verdicts are kept per value of those, so
                # the draws of the states between two moves of a piece share them.
                memo = firsts[a] = DefMemo(state_fields(a.first_cond, {}))
            self.segments.append((memo, base, len(first) - base, None))
            if a.static_test is not None and memo.fields is not None:
                self.spans.append((memo, starts[-1], m, a, ps,
                                   [(starts[-1] + j, base + j // width) for j in runs]))
        self.starts, self.ends, self.n, self.fid = starts, ends, m, fid
        # Which groups keep position verdicts (their first and static checks, `static_prefix`).
        self.static = [any(span[1] == starts[g] for span in self.spans)
                       for g in range(len(self.groups))]
        self.base = list(range(m))          # the positions before a draw (see the draws)
        self.first, self.nf = tuple(first), len(first)


def _lazy_fixed(st, rng, lay: _Layout):
    verdict = bytearray(lay.nf)             # 0 not known yet, then a verdict (NO_CHECK...)
    verdict[0] = NO_CHECK
    memos = []
    for dm, base, count, col in lay.segments:
        if col is not None:
            field, fe, negated, ords, a = col
            try:
                e = fe(st, a.first_env)
            except EvalError:
                continue                    # each first value is tried alone, as it comes
            entries = st[field]
            if negated:
                verdict[base:base + count] = bytes([FAILS if entries[o] == e else PASSES
                                                    for o in ords])
            else:
                verdict[base:base + count] = bytes([PASSES if entries[o] == e else FAILS
                                                    for o in ords])
            continue
        memo = dm.memo if st is dm.last else dm.switch(st)
        known = memo.get(())
        if known is not None:
            verdict[base:base + count] = known
        memos.append((memo, base, count))
    if not lay.spans or _randbelow(rng) is None:
        try:
            return _lazy_draw(st, rng, lay, verdict)
        finally:
            for memo, base, count in memos:
                memo[()] = verdict[base:base + count]
    pos = bytearray(lay.n)                  # per position: 0 not known, FAILS, PASSES
    spans = []
    for dm, start, end, a, ps, runs in lay.spans:
        memo = dm.memo if st is dm.last else dm.switch(st)
        known = memo.get(POSITIONS)
        if known is None:
            known = _positions(st, a, ps, start, end, runs, verdict, lay.first)
        pos[start:end] = known
        spans.append((memo, start, end))
    try:
        return _lazy_draw_static(st, rng, lay, verdict, pos)
    finally:
        for memo, base, count in memos:
            memo[()] = verdict[base:base + count]
        for memo, start, end in spans:
            memo[POSITIONS] = pos[start:end]


def _lazy_draw(st, rng, lay: _Layout, verdict: bytearray):
    bits = _randbelow(rng)
    if bits is None:
        return _lazy_draw_calls(st, rng, lay, verdict)
    n = lay.n
    # The positions as the reference list holds them, copied per draw: a list's reads are
    # cheaper than a dict's `get`, and copying it costs less than the reads it saves.
    perm = lay.base[:]
    fid, first = lay.fid, lay.first
    w = n.bit_length()                      # randrange(n) draws w bits: n < 2 ** w
    lo = 1 << (w - 1) if w else 0
    while n:
        while n < lo:
            w -= 1
            lo >>= 1
        while n >= lo:                      # w bits a draw while n stays in [lo, 2 lo)
            i = bits(w)
            while i >= n:
                i = bits(w)
            n -= 1
            k = perm[i]
            perm[i] = perm[n]
            f = fid[k]
            v = verdict[f]
            if v == FAILS:
                continue                    # its guard would stop at the first check
            if not v:
                a, x = first[f]
                v = verdict[f] = first_verdict(a, st, x)
                if v == FAILS:
                    continue
            picked = _candidate(st, lay, k, v)
            if picked is not None:
                return picked
    return None


def _lazy_draw_calls(st, rng, lay: _Layout, verdict: bytearray):
    """`_lazy_draw` for a `Random` subclass: its own `randrange` is called."""
    n = lay.n
    moved: dict = {}
    get = moved.get
    fid, first = lay.fid, lay.first
    while n:
        i = rng.randrange(n)
        n -= 1
        k = get(i, i)
        moved[i] = get(n, n)
        f = fid[k]
        v = verdict[f]
        if v == FAILS:
            continue
        if not v:
            a, x = first[f]
            v = verdict[f] = first_verdict(a, st, x)
            if v == FAILS:
                continue
        picked = _candidate(st, lay, k, v)
        if picked is not None:
            return picked
    return None


def _positions(st, a, ps, start, end, runs, verdict, first) -> bytearray:
    """The position verdicts of ``a``'s candidates (positions ``start`` to ``end``) for the
    values of ``st``, all at once: each run of a first value that fails its first check is
    failed whole; in a run that passes, every candidate's static checks are evaluated (the
    draws of the next states with these values read them, and a tight loop costs less than
    one evaluation per candidate as the draws come to it).  0 where a check cannot be
    evaluated: the draw then runs the whole guard there."""
    out = bytearray(end - start)
    env, test = a.first_env, a.static_test
    two = len(a.slots) == 2
    s0, s1 = a.slots[0], a.slots[-1]
    for (lo, f), hi in zip(runs, [r[0] for r in runs[1:]] + [end]):
        v = verdict[f]
        if not v:
            v = verdict[f] = first_verdict(a, st, first[f][1])
        if v == FAILS:
            out[lo - start:hi - start] = bytes([FAILS]) * (hi - lo)
        elif v == PASSES:
            for j in range(lo - start, hi - start):
                if two:
                    env[s0], env[s1] = ps[j]
                else:
                    for slot, x in zip(a.slots, ps[j]):
                        env[slot] = x
                try:
                    out[j] = PASSES if test(st, env) else FAILS
                except EvalError:
                    pass
    return out



def _lazy_draw_static(st, rng, lay: _Layout, verdict: bytearray, pos: bytearray):
    """`_lazy_draw` for a layout whose actions keep position verdicts (`static_prefix`):
    ``pos[k]`` says whether candidate ``k`` failed its first or static check (FAILS, passed
    over with one read), passed both (PASSES: the rest of its guard runs), or neither (0: a
    candidate of an action that keeps none, or one whose checks cannot be evaluated, asked as
    `_lazy_draw` asks it; one whose first verdict is not known yet gets it kept)."""
    bits = rng.getrandbits
    n = lay.n
    # The positions in place, the identity between draws (one draw at a time: the engine's
    # caches assume one caller): each position written is put back after the draw.  A copy
    # of them all cost more, since most candidates here are passed over with one read.
    perm = lay.base
    moved = []
    mark = moved.append
    fid, first, static = lay.fid, lay.first, lay.static
    ends, starts, groups = lay.ends, lay.starts, lay.groups
    try:
        w = n.bit_length()
        lo = 1 << (w - 1) if w else 0
        while n:
            while n < lo:
                w -= 1
                lo >>= 1
            while n >= lo:
                i = bits(w)
                while i >= n:
                    i = bits(w)
                n -= 1
                k = perm[i]
                perm[i] = perm[n]
                mark(i)
                p = pos[k]
                if p == FAILS:
                    continue
                g = bisect_right(ends, k)
                a, ps = groups[g]
                params = ps[k - starts[g]]
                if p != PASSES:
                    f = fid[k]
                    v = verdict[f]
                    if not v:
                        v = verdict[f] = first_verdict(a, st, first[f][1])
                    if v == FAILS:
                        if static[g]:
                            pos[k] = FAILS
                        continue
                    if v != PASSES or not static[g]:
                        st2 = successor_past_first(a, st, params) if v == PASSES else \
                            successor(a, st, params)
                        if st2 is not None:
                            return a, params, st2
                        continue
                    p = static_verdict(a, st, params)
                    if p == ERRS:           # the whole guard runs, and says why
                        st2 = successor_past_first(a, st, params)
                        if st2 is not None:
                            return a, params, st2
                        continue
                    pos[k] = p
                    if p == FAILS:
                        continue
                env = a.draw_env            # `successor`, past the first and static checks
                sl = a.slots
                if len(sl) == 2:            # most moves: two parameters
                    s0, s1 = sl
                    env[s0], env[s1] = params
                else:
                    for slot, x in zip(sl, params):
                        env[slot] = x
                pre = a.guard_after_static
                if pre is not None and not pre(st, env):
                    continue
                try:
                    return a, params, a.rest(st, env, None)
                except Refused:
                    continue
        return None
    finally:
        for i in moved:
            perm[i] = i


def _candidate(st, lay: _Layout, k: int, v: int):
    """``(action, params, successor)`` of the candidate at index ``k``, whose first verdict
    is ``v`` (`NO_CHECK` when its action has no first check), or None if refused."""
    g = bisect_right(lay.ends, k)
    a, ps = lay.groups[g]
    params = ps[k - lay.starts[g]]
    st2 = successor_past_first(a, st, params) if v == PASSES else successor(a, st, params)
    return None if st2 is None else (a, params, st2)


# A first verdict (`_Layout`'s ids, kept in a bytearray): 0 not known yet; the action has no
# first check (the id 0 says it); the check passes; it fails; it cannot be evaluated (the
# whole guard then runs, and says why).
NO_CHECK, PASSES, FAILS, ERRS = 1, 2, 3, 4


def first_verdict(a, st, v) -> int:
    """Whether the first check of ``a``'s guard (`first_test`) passes for a first parameter
    ``v``: PASSES, FAILS, or ERRS when it cannot be evaluated."""
    env = a.first_env
    env[a.domains[0][0]] = v
    try:
        return PASSES if a.first_test(st, env) else FAILS
    except EvalError:
        return ERRS


POSITIONS = "positions"     # where a verdict memo keeps an action's position verdicts


def static_verdict(a, st, params) -> int:
    """Whether the static checks of ``a``'s guard (`static_prefix`) pass for a candidate
    whose first check passed: PASSES, FAILS, or ERRS when they cannot be evaluated."""
    env = a.first_env
    for slot, v in zip(a.slots, params):
        env[slot] = v
    try:
        return PASSES if a.static_test(st, env) else FAILS
    except EvalError:
        return ERRS


def static_prefix(cc, first_cond, rest: tuple, bool_check):
    """``(test, after)`` for a guard whose first check is ``first_cond`` and whose prefix
    goes on with ``rest``: ``test`` evaluates the leading requires of ``rest`` that read no
    field of the state ``first_cond`` does not read (a piece must fit a fixed space: the
    piece chosen and the move's parameters), ``after`` the rest of the prefix.  Their
    verdict depends on the candidate and on the values the first verdicts are kept by, so
    it is kept per candidate beside them: a candidate that failed is passed over with one
    read in the draws of every state with those values.  (None, None) when no requires
    qualifies."""
    fields = state_fields(first_cond, {}) if first_cond is not None else None
    if fields is None:
        return None, None
    j = 0
    while j < len(rest) and isinstance(rest[j], ir.Requires):
        f = state_fields(rest[j].cond, {})
        if f is None or not f <= fields:
            break
        j += 1
    if not j:
        return None, None
    cond = rest[0].cond
    for r in rest[1:j]:
        cond = ir.Binary(cond.type, cond.span, "and", cond, r.cond)
    return cc.expr(cond), bool_check(cc, rest[j:])


def first_column(cc, cond, params: list):
    """``(field, value, negated, index)`` when a first check ``cond`` is ``F[p] == e`` or
    ``F[p] != e`` (either way round) for a field ``F`` of the state, ``p`` the first of the
    parameter slots ``params`` and ``e`` reading none of them (its other locals are its own
    binders: no let comes before a first check): ``value(st, env)`` evaluates ``e``,
    ``index`` maps a key to its entry's position in ``st[field]``.  The verdicts of every
    first value then come from one pass over the field: ``st[field][index[x]] == e`` is what
    the check computes for ``x`` (a key of the field's type has no other failure).  None for
    any other check."""
    if not (isinstance(cond, ir.Binary) and cond.op in ("==", "!=")):
        return None
    for side, other in ((cond.left, cond.right), (cond.right, cond.left)):
        if isinstance(side, ir.Index) and isinstance(side.key, ir.Local) \
                and side.key.slot == params[0] and isinstance(side.coll, ir.Field) \
                and isinstance(side.coll.record, ir.StateRef) and not side.coll.record.old \
                and not isinstance(side.coll.type, SeqT) \
                and not any((isinstance(x, ir.Local) and x.slot in params) or
                            (isinstance(x, ir.StateRef) and x.old) for x in nodes(other)):
            ct = side.coll.type
            kt = ct.key if isinstance(ct, MapT) else ct.elem
            return side.coll.index, cc.expr(other), cond.op == "!=", finite(kt).index
    return None


def successor_past_first(a, st, params):
    """`successor` for a candidate whose first check passed: the rest of its guard prefix."""
    env = a.draw_env
    for slot, v in zip(a.slots, params):
        env[slot] = v
    pre = a.guard_after_first
    if pre is not None and not pre(st, env):
        return None
    try:
        return a.rest(st, env, None)
    except Refused:
        return None


def successor(a, st, params):
    """The successor of a candidate, or None when its guard prefix or its body refuses it
    (nothing shown is kept: no rendering)."""
    env = a.draw_env
    if a.slot0 is not None:
        env[a.slot0] = params[0]
    else:
        for slot, v in zip(a.slots, params):
            env[slot] = v
    pre = a.guard_check
    if pre is not None and not pre(st, env):
        return None
    try:
        return a.rest(st, env, None)
    except Refused:
        return None
