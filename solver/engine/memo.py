"""Remembered evaluations of the concrete interpreter: def calls per state and arguments
(shared by a def's call sites and by the generated code of codegen.py), a quantifier's
filtered domain per state, and an expression of the state alone once per state."""
from __future__ import annotations

from typing import Callable

from . import domains as dz
from ..lang import ir
from ..lang.errors import EvalError
from ..lang.irwalk import nodes

Fn = Callable


def local(f: Fn) -> int | None:
    """The env index ``f`` reads, when ``f`` is a local's closure (see Compiler.expr)."""
    return getattr(f, "local", None)


def reads_no_state(body: ir.Expr) -> bool:
    """A def body that reads no state (only its arguments): a function of them alone."""
    return not any(isinstance(n, ir.StateRef) for n in nodes(body))


PURE_MEMO_SIZE = 1 << 16

# A pure call keyed by a large value (a seq of records, a map over a grid: memo.Idents) pays a
# number for it, a lookup and an insert at every miss, and a random playout, whose such values
# change at every move, misses nearly always.  Such a call site counts its hits over each window of
# `PURE_WINDOW` misses; a window with fewer than one hit in `PURE_RARE` misses stops the
# remembering for the next `PURE_PAUSE` calls (the body is called directly), then a new
# window tries again.  The values are the same either way: only the cost changes.
PURE_WINDOW = 1 << 10
PURE_RARE = 16
PURE_PAUSE = 1 << 14


def pure_rate() -> list:
    """The counters of one such call site: ``[n, hits]``, n > 0 the misses left in the
    window (remembering), n < 0 the calls left in the pause, 0 the pause over."""
    return [PURE_WINDOW, 0]


def pure_window(rate: list) -> None:
    """A miss at the end of a window (n = 1) or after a pause (n = 0): pause when the window
    hit less than one in `PURE_RARE` misses, else open the next window."""
    if rate[0] and rate[1] * PURE_RARE < PURE_WINDOW:
        rate[0] = -PURE_PAUSE
    else:
        rate[0] = PURE_WINDOW
    rate[1] = 0


def memoised_pure(fb: Fn, fargs: list) -> Fn:
    """A stateless def call remembered across states, by argument values: a search meets the
    same values in many states (the score of a part that no move touched is computed once,
    not once per state).  The memo is emptied when full, so it stays bounded."""
    memo: dict = {}

    def pcall(st, env):
        key = tuple(f(st, env) for _, f in fargs)
        for (s1, _), v in zip(fargs, key):
            env[s1] = v
        try:
            hit = memo.get(key, memo)
        except TypeError:   # an unhashable argument
            return fb(st, env)
        if hit is memo:
            if len(memo) >= PURE_MEMO_SIZE:
                memo.clear()
            hit = memo[key] = fb(st, env)
        return hit
    return pcall


IDENT_SIZE = 1 << 12


class Idents:
    """Small numbers standing for large argument values (a seq of records, a board) in a memo's
    key: a tuple's hash is not kept, so a memo keyed by a whole such value hashed it again at every
    call.  A value is hashed once per object that holds it (the object is remembered by
    identity, and kept alive while remembered); equal values get the same number, so the memo
    still meets a value reached twice.  Numbers are never reused, so a memo keyed by one stays
    right when the tables are emptied (past `IDENT_SIZE` values)."""

    __slots__ = ("by_id", "by_value", "next")

    def __init__(self) -> None:
        self.by_id: dict = {}
        self.by_value: dict = {}
        self.next = 0

    def __call__(self, x) -> int:
        e = self.by_id.get(id(x))
        if e is not None and e[0] is x:
            return e[1]
        n = self.by_value.get(x)
        if n is None:
            if len(self.by_value) >= IDENT_SIZE:
                self.by_value.clear()
            n = self.by_value[x] = self.next
            self.next += 1
        if len(self.by_id) >= IDENT_SIZE:
            self.by_id.clear()
        self.by_id[id(x)] = (x, n)
        return n


FIELD_MEMO_STATES = 256
# A def's calls kept per value of the fields it reads (`DefMemo`) are looked for again over a
# window of this many states; when fewer than one in STORE_RARE is found, only each state's own
# calls are kept for the next STORE_PAUSE states.
STORE_WINDOW = 256
STORE_RARE = 16
STORE_PAUSE = 2048
# A memo kept across states is bounded too: a def of a rarely changed field, called with ever
# new arguments, would otherwise grow all run long.
MEMO_CALLS = 1 << 14


class _FieldValues:
    """The values some fields of the state have, named by a small number: the defs that read
    the same fields (a board's heights and pieces) name a state's values once between them,
    instead of each hashing the whole board again.  Numbers are never reused, so a memo keyed
    by one stays right when the table is emptied (past FIELD_MEMO_STATES * 16 values).

    A set of several fields names a board (a tuple) among them by that field's own number:
    a board is hashed once per value met, however many sets of fields read it (heights and
    pieces; heights, pieces and the points left; ...)."""

    __slots__ = ("fields", "last", "id", "ids", "next", "parts")

    def __init__(self, fields: tuple):
        self.fields = fields
        self.last = None
        self.id = None
        self.ids: dict = {}
        self.next = 0
        self.parts = None if len(fields) == 1 else \
            tuple((i, field_values((i,))) for i in fields)

    def of(self, st):
        """The number of ``st``'s values (None when a field is not hashable)."""
        if st is self.last:
            return self.id
        last, self.last = self.last, st
        if last is not None and self.id is not None:
            # A move shares the fields it leaves alone with the state before it: the same
            # objects (hashable, so immutable) have the same values, hashed no more.
            for i in self.fields:
                if st[i] is not last[i]:
                    break
            else:
                return self.id
        if self.parts is None:
            key = (st[self.fields[0]],)
        else:
            # A field's values are all tuples or none is (its type says which): a place of
            # the key holds numbers or values, never both.
            key = []
            for i, one in self.parts:
                v = st[i]
                if type(v) is tuple:
                    v = one.of(st)
                    if v is None:       # a board that is not hashable
                        self.id = None
                        return None
                key.append(v)
            key = tuple(key)
        try:
            n = self.ids.get(key)
        except TypeError:       # a field that is not hashable
            self.id = None
            return None
        if n is None:
            if len(self.ids) >= FIELD_MEMO_STATES * 16:
                self.ids.clear()
            n = self.ids[key] = self.next
            self.next += 1
        self.id = n
        return n


_FIELD_VALUES: dict[tuple, _FieldValues] = {}


def field_values(fields: tuple) -> _FieldValues:
    """The numbering of the values of ``fields`` (sorted indices), shared by its readers."""
    fv = _FIELD_VALUES.get(fields)
    if fv is None:
        fv = _FIELD_VALUES[fields] = _FieldValues(fields)
    return fv


class DefMemo:
    """One def's remembered calls, shared by its call sites, for the states met lately.

    A def that reads only some fields of the state (``fields``) has the same values in every
    state that agrees on them: its calls are kept per value of those fields, so a search whose
    move leaves those fields alone computes none of them again.
    Up to FIELD_MEMO_STATES such values are kept, then all are dropped; so are a value's
    calls past MEMO_CALLS.  A def that reads the state whole (``fields`` None) keeps the
    calls of the last state only, and so does a def whose kept calls are rarely found again
    (fewer than one state in STORE_RARE over a window), for a while: in a search whose every
    move changes a field most defs of its bound read, keeping the calls of each state met cost
    5 to 6 % of the search, for nothing found."""

    __slots__ = ("fields", "store", "last", "memo", "window", "found")

    def __init__(self, fields):
        if fields is None:
            self.fields = None
        else:
            self.fields = field_values(tuple(sorted(fields)))
        self.store: dict = {}
        self.last = None
        self.memo: dict = {}
        # Switches left in this window (> 0) or in a pause (< 0), and the states of this
        # window whose calls were found kept (see `switch`).
        self.window = STORE_WINDOW
        self.found = 0

    def switch(self, st) -> dict:
        """The memo for ``st`` (the caller checked that ``st`` is not the last state)."""
        self.last = st
        fv = self.fields
        w = self.window
        if fv is None or w < 0:
            # The state read whole, or a pause: the calls of this state only.
            if w < 0:
                # The pause's last state opens a new window.
                self.window = w + 1 if w < -1 else STORE_WINDOW
            self.memo = {}
            return self.memo
        # The defs that read the same fields share their numbering: the first to meet st
        # names it, the others read the name.
        n = fv.id if st is fv.last else fv.of(st)
        if n is None:
            self.memo = {}
            return self.memo
        memo = self.store.get(n)
        if memo is None:
            if len(self.store) >= FIELD_MEMO_STATES:
                self.store.clear()
            memo = self.store[n] = {}
        else:
            self.found += 1
        if w == 1:
            # A window's end: where moves change the fields read almost every time (a
            # playout, a search of moves that all touch them), keeping each state's calls
            # costs more than the few found again; pause, then look again.
            if self.found * STORE_RARE < STORE_WINDOW:
                self.window = -STORE_PAUSE
                self.store.clear()
            else:
                self.window = STORE_WINDOW
            self.found = 0
        else:
            self.window = w - 1
        self.memo = memo
        return memo


def memoised(fb: Fn, fargs: list, symbolic: bool, shared: DefMemo | None = None) -> Fn:
    """A def call remembered per state and argument values: a flood asked by every candidate
    move is computed once.  Concretely the memo is a `DefMemo` (shared by
    the def's call sites; across states that agree on the fields the def reads).  A symbolic
    call is remembered for the last state only, and only for concrete arguments (z3 terms
    compare as terms, not as values)."""
    if shared is None:
        shared = DefMemo(None)
    if not symbolic and 1 <= len(fargs) <= 2:
        # The common cases without the generic loop: one or two arguments, concrete.  The
        # keys are the tuples mcall builds: the memo is shared with it.
        (s1, f1), (s2, f2) = fargs[0], fargs[-1]
        one = len(fargs) == 1
        l1 = local(f1)

        def mcall12(st, env):
            memo = shared.memo if st is shared.last else shared.switch(st)
            if one:
                a = env[l1] if l1 is not None else f1(st, env)
                env[s1] = a
                key = (a,)
            else:
                key = (f1(st, env), f2(st, env))
                env[s1], env[s2] = key
            try:
                hit = memo.get(key, memo)
            except TypeError:
                return fb(st, env)
            if hit is memo:
                if len(memo) >= MEMO_CALLS:
                    memo.clear()
                hit = memo[key] = fb(st, env)
            return hit
        return mcall12

    def mcall(st, env):
        memo = shared.memo if st is shared.last else shared.switch(st)
        key = tuple(f(st, env) for _, f in fargs)
        for (s1, _), v in zip(fargs, key):
            env[s1] = v
        if symbolic and not dz.is_concrete(key):
            return fb(st, env)
        try:
            hit = memo.get(key, memo)
        except TypeError:   # an unhashable argument
            return fb(st, env)
        if hit is memo:
            if len(memo) >= MEMO_CALLS:
                memo.clear()
            hit = memo[key] = fb(st, env)
        return hit
    return mcall


# ---- concrete quantifiers ----------------------------------------------------------------------

FAILS: list = []     # a filter that fails on some value (see remembered_filter)


def remembered_filter(fd, fw, s1, shared: "DefMemo", outer: tuple[int, ...], pre=None):
    """The domain ``fd`` filtered by ``fw``, as ``(True, value)`` pairs, computed once per
    state and value of the ``outer`` env entries (see Compiler._filter_memo).  When the filter
    fails on some value, the error is left to the plain loop, which may stop before that value;
    that the filter fails is remembered, so the next evaluation goes straight to the loop.

    ``pre``: ``(fp, shared_p, outer_p, rest)`` when ``fw`` is ``p and r1 and ...`` with ``p``
    reading fewer fields of the state (see Compiler._prefilter): the values that pass ``p`` are
    remembered per value of its own fields, and only they are asked the ``rest`` (in order,
    as `and` asks them).  A region's squares, say, are found once while only the pieces move,
    not once per state.  The values kept are the same, in the same order."""
    passing = None if pre is None else _passing(fd, pre[0], s1, pre[1], pre[2])
    rest = () if pre is None else pre[3]

    def filtered(st, env):
        memo = shared.memo if st is shared.last else shared.switch(st)
        key = tuple([env[i] for i in outer]) if outer else ()
        hit = memo.get(key)
        if hit is None:
            hit = []
            try:
                dom = FAILS if passing is None else passing(st, env)
                if dom is FAILS:
                    for g, v in fd(st, env):
                        env[s1] = v
                        if fw(st, env):
                            hit.append((g, v))
                else:
                    for g, v in dom:
                        env[s1] = v
                        for fr in rest:
                            if not fr(st, env):
                                break
                        else:
                            hit.append((g, v))
            except EvalError:
                hit = FAILS
            if len(memo) >= MEMO_CALLS:
                memo.clear()
            memo[key] = hit
        if hit is FAILS:
            return _Lazy(fd(st, env), fw, s1, st, env)
        return hit
    return filtered


def _passing(fd, fw, s1, shared: "DefMemo", outer: tuple[int, ...]):
    """The pairs of ``fd`` that pass ``fw``, per state (the fields fw reads) and value of the
    ``outer`` entries; FAILS when fw fails on some value."""
    def passing(st, env):
        memo = shared.memo if st is shared.last else shared.switch(st)
        key = tuple([env[i] for i in outer]) if outer else ()
        hit = memo.get(key)
        if hit is None:
            hit = []
            try:
                for g, v in fd(st, env):
                    env[s1] = v
                    if fw(st, env):
                        hit.append((g, v))
            except EvalError:
                hit = FAILS
            if len(memo) >= MEMO_CALLS:
                memo.clear()
            memo[key] = hit
        return hit
    return passing


def remembered_value(f: Fn, shared: "DefMemo") -> Fn:
    """``f``, an expression of the state alone, evaluated once per state (the fields it
    reads, as a def's memo).  An evaluation that fails is not remembered."""
    def once(st, env):
        memo = shared.memo if st is shared.last else shared.switch(st)
        hit = memo.get((), memo)
        if hit is memo:
            hit = memo[()] = f(st, env)
        return hit
    return once


class _Lazy:
    """A domain filtered as it is walked: its `where` is evaluated for each value only when
    the loop gets there, as without a memo."""

    __slots__ = ("items", "fw", "s1", "st", "env")

    def __init__(self, items, fw, s1, st, env):
        self.items, self.fw, self.s1, self.st, self.env = items, fw, s1, st, env

    def __iter__(self):
        env, st, fw, s1 = self.env, self.st, self.fw, self.s1
        for g, v in self.items:
            env[s1] = v
            if fw(st, env):
                yield g, v
