"""Incremental evaluation of a concrete `fix` whose step is a `table` over the map's keys.

A flood (`fix r = seed: table s in K: r[s] or (ok[s] and exists d ...: r[shift(s, d)])`)
recomputed naively evaluates every key at every step, although after the first step only the
keys next to what changed can change.  Here each key's body is evaluated once with `r` behind
a proxy that records which entries it reads; at the next step only the keys that read an entry
that changed are evaluated again.  This is sound for any step of that shape, monotone or not:
the body of key k depends on `r` only through the entries it read (the state and the other
locals are fixed during the fixpoint), so a key none of whose entries changed has the same
value as before.  The result, and the number of steps counted against `within`, are those of
the plain iteration.

It applies only when every use of `r` in the step is `r[key]` (with no `r` inside the key):
passed whole to a def, quantified over or compared, `r` could be read without being recorded,
so such a step is iterated plainly."""
from __future__ import annotations

import heapq

from ..lang import ir
from ..lang.irwalk import nodes
from ..lang.errors import EvalError
from ..lang.types import BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, default, finite


class Reads:
    """``r`` as the step reads it: the current values, and the entries read since reset."""

    __slots__ = ("vals", "seen")

    def __init__(self, vals):
        self.vals = vals
        self.seen: set = set()

    def __getitem__(self, i):
        self.seen.add(i)
        return self.vals[i]


class Into:
    """The reads of one key, entered straight into the readers' lists (the generated code's
    `Reads.seen`): entry j read by key i puts i in ``readers[j]``."""

    __slots__ = ("readers", "key")

    def __init__(self, readers: list, key: int):
        self.readers, self.key = readers, key

    def add(self, j):
        self.readers[j].append(self.key)


def applies(e: ir.Fix) -> bool:
    step = e.step
    if not (isinstance(e.type, MapT) and isinstance(step, ir.Quant) and step.kind == "table"
            and isinstance(step.domain, ir.TypeDomain) and step.domain.elem == e.type.key):
        return False
    uses = indexed = 0
    for n in nodes(step):
        if isinstance(n, ir.Local) and n.slot == e.slot:
            uses += 1
        elif isinstance(n, ir.Index) and isinstance(n.coll, ir.Local) and n.coll.slot == e.slot:
            indexed += 1
    # nodes() yields the Local under each such Index too: equal counts mean no other use.
    return uses == indexed


def compile_fix(fseed, fwhere, fbody, e: ir.Fix):
    """``fix(st, env)`` for a fix that `applies`; fwhere/fbody are the table's compiled parts."""
    step = e.step
    keys = finite(step.domain.elem).values
    n = len(keys)
    s1, k1, bound = e.slot + 1, step.slot + 1, e.bound
    dflt = default(step.type.val)

    def fix(st, env):
        r = list(fseed(st, env))
        if bound <= 0:
            env[s1] = tuple(r)
            return env[s1]
        proxy = Reads(r)
        env[s1] = proxy
        readers: list[list[int]] = [[] for _ in range(n)]   # entry j -> keys that read it
        nxt = [None] * n
        for i in range(n):
            proxy.seen = seen = set()
            env[k1] = keys[i]
            nxt[i] = fbody(st, env) if fwhere is None or fwhere(st, env) else dflt
            for j in seen:
                readers[j].append(i)
        steps = 1
        while True:
            changed = [i for i in range(n) if nxt[i] != r[i]]
            if not changed:
                break
            r = nxt
            if steps >= bound:
                break
            todo = sorted({i for j in changed for i in readers[j]})
            nxt = list(r)
            proxy.vals = r
            for i in todo:
                proxy.seen = seen = set()
                env[k1] = keys[i]
                nxt[i] = fbody(st, env) if fwhere is None or fwhere(st, env) else dflt
                for j in seen:
                    readers[j].append(i)   # stale entries only cost a needless re-evaluation
            steps += 1
        out = tuple(r)
        env[s1] = out
        return out
    return fix


# ---- shortest paths ---------------------------------------------------------------------------
#
# A fix of the shape
#     fix r = seed within N: table s in K:
#       least(r[s], c(s) + min d in D where ok(s, d): r[to(s, d)])
# (`c(s) +` optional, the operands of `least` and `+` in either order) is a relaxation of
# shortest paths: r after i steps is, for each key s, the least of seed[t] + c(s) + c(s1) + ...
# over the walks s, s1, ..., t of at most i edges along `to` (an empty `min` adds its value, 0,
# as an edge to nowhere).  With costs c >= 0 Dijkstra's algorithm finds the limit at once, and
# with it the fewest edges a cheapest walk needs: the plain iteration reaches the limit after
# that many steps, so when it is within N the value is exactly the iteration's.  Otherwise (a
# negative cost, `within` too short, an edge to no key) the step is iterated as before.
#
# The edges are asked only when `ok` and `to` read no state and nothing but s and d (and the
# game's parameters): they are then constants of the compiled game, found once.

def _own_first(e: ir.Fix, a, b):
    """``(a, b)`` of a step body's two operands with ``r[s]`` first (``r`` the fix's region,
    ``s`` its step's key), or None when neither is ``r[s]``."""
    r, s = e.slot, e.step.slot

    def own(x):             # r[s]
        return (isinstance(x, ir.Index) and isinstance(x.coll, ir.Local) and x.coll.slot == r
                and isinstance(x.key, ir.Local) and x.key.slot == s)
    if own(b):
        a, b = b, a
    return (a, b) if own(a) else None


def _along_edges(e: ir.Fix, q, kind: str, extra, cache: dict) -> bool:
    """Whether ``q`` is ``kind d in T where w: r[to]`` over the fix's region ``r`` with ``w``
    and ``to`` reading no state and nothing but the step's key and ``d`` (the edges, constants
    of the compiled game), and ``extra`` (the cost or the filter, or None) not reading ``r``."""
    r, s = e.slot, e.step.slot
    if not (isinstance(q, ir.Quant) and q.kind == kind and isinstance(q.domain, ir.TypeDomain)
            and isinstance(q.body, ir.Index) and isinstance(q.body.coll, ir.Local)
            and q.body.coll.slot == r):
        return False

    def reads_r(x):
        return x is not None and any(isinstance(n, ir.Local) and n.slot == r for n in nodes(x))

    if reads_r(extra) or reads_r(q.where) or reads_r(q.body.key):
        return False
    for x in (q.where, q.body.key):
        if x is None:
            continue
        reads, bound, _, old, state = summary(x, cache)
        if state or old or not reads - bound <= {s, q.slot} \
                or any(isinstance(n, ir.RealExists) for n in nodes(x)):
            return False
    return True


def min_plus(e: ir.Fix, cache: dict):
    """``(cost or None, the min quantifier)`` when ``e`` has the shape above, else None."""
    if not applies(e) or e.step.where is not None:
        return None
    body = e.step.body
    if not (isinstance(body, ir.Builtin) and body.name == "least" and len(body.args) == 2):
        return None
    pair = _own_first(e, *body.args)
    if pair is None:
        return None
    b = pair[1]
    cost = None
    if isinstance(b, ir.Binary) and b.op == "+":
        cost, b = (b.left, b.right) if isinstance(b.right, ir.Quant) else (b.right, b.left)
    if not _along_edges(e, b, "min", cost, cache) or not isinstance(b.type, IntT) \
            or (cost is not None and not isinstance(cost.type, IntT)):
        return None
    return cost, b


def compile_min_plus(fseed, fcost, fok, fto, e: ir.Fix, quant: ir.Quant, empty, fallback):
    """``fix(st, env)`` for a fix that `min_plus` recognised: fcost (every key's cost, as a
    `table` in the keys' order), fok and fto are the compiled costs, filter and target;
    ``empty`` the value of an empty `min`; ``fallback`` the plain (or incremental)
    evaluation, used when the limit is not the iteration's value."""
    keys = finite(e.step.domain.elem).values
    n = len(keys)
    where = {k: i for i, k in enumerate(keys)}
    dvals = finite(quant.domain.elem).values
    k1, d1, s1, bound = e.step.slot + 1, quant.slot + 1, e.slot + 1, e.bound
    graph: list = []            # [into, ends]: the keys whose min reads each key; dead ends

    def edges(st, env):
        into: list[list[int]] = [[] for _ in range(n)]
        ends = []
        for i, k in enumerate(keys):
            env[k1] = k
            hit = False
            for d in dvals:
                env[d1] = d
                if fok is None or fok(st, env):
                    j = where.get(fto(st, env))
                    if j is None:
                        return None
                    into[j].append(i)
                    hit = True
            if not hit:
                ends.append(i)
        return into, ends

    def fix(st, env):
        if bound <= 0:
            return fallback(st, env)
        if not graph:
            g = edges(st, env)
            if g is None:
                return fallback(st, env)
            graph.append(g)
        into, ends = graph[0]
        seed = fseed(st, env)
        cost = [0] * n if fcost is None else fcost(st, env)
        if fcost is not None and min(cost) < 0:
            return fallback(st, env)
        if bound >= n:
            # A cheapest walk needs no more than n - 1 edges (a cycle costs nothing at best),
            # and one to nowhere: the iteration reaches the limit within its bound.
            out = _dijkstra(list(seed), cost, into, ends, empty)
            env[s1] = out
            return out
        best = [(seed[i], 0) for i in range(n)]
        for i in ends:
            c = (cost[i] + empty, 1)
            if c < best[i]:
                best[i] = c
        heap = [(v, h, i) for i, (v, h) in enumerate(best)]
        heapq.heapify(heap)
        while heap:
            v, h, j = heapq.heappop(heap)
            if (v, h) != best[j]:
                continue
            for i in into[j]:
                c = (v + cost[i], h + 1)
                if c < best[i]:
                    best[i] = c
                    heapq.heappush(heap, (c[0], c[1], i))
        if max(h for _, h in best) > bound:
            return fallback(st, env)
        out = tuple(v for v, _ in best)
        env[s1] = out
        return out
    return fix


def _dijkstra(val: list, cost: list, into: list, ends: list, empty) -> tuple:
    """The least of val[t] + the costs of the keys walked from each key to t (see above)."""
    for i in ends:
        c = cost[i] + empty
        if c < val[i]:
            val[i] = c
    lo, hi = min(val), max(val)
    if isinstance(lo, int) and isinstance(hi, int) and hi - lo <= 4 * len(val):
        # Few distinct values (short distances): a bucket per value instead of a heap.
        # A key at hi improves no other (every value is at most hi, no cost is below 0): the
        # last bucket is neither filled nor walked.
        buckets: list[list[int]] = [[] for _ in range(hi - lo)]
        for i, v in enumerate(val):
            if v < hi:
                buckets[v - lo].append(i)
        for b, bucket in enumerate(buckets):
            v = b + lo
            for j in bucket:                # grows while it is walked: edges that cost 0
                if val[j] != v:
                    continue
                for i in into[j]:
                    c = v + cost[i]
                    if c < val[i]:          # so c < hi, and c >= v: a bucket not yet done
                        val[i] = c
                        buckets[c - lo].append(i)
        return tuple(val)
    heap = [(v, i) for i, v in enumerate(val)]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        v, j = pop(heap)
        if v != val[j]:
            continue
        for i in into[j]:
            c = v + cost[i]
            if c < val[i]:
                val[i] = c
                push(heap, (c, i))
    return tuple(val)


# ---- floods ---------------------------------------------------------------------------------
#
# A fix of the shape
#     fix r = seed within N: table s in K:
#       r[s] or (ok(s) and exists d in D where w(s, d): r[to(s, d)])
# (the operands of `or` in either order, `ok` optional and reading no `r`) grows a region:
# after i steps it holds the seed and every key whose `ok` holds that i steps of `to`
# (through keys whose `ok` holds) take into the seed.  A search from the seed finds the limit
# asking `ok` only of the keys next to the region, not of every key at every step; the steps
# the plain iteration needs are the search's depth, so when that is within N the value is
# exactly the iteration's.  Like the shortest paths' edges, `w` and `to` must read no state
# and nothing but s and d (constants of the compiled game, found once), and `ok` must be
# unable to fail (`cannot_fail`): the iteration asks it of every key, the search of some.

def flood(e: ir.Fix, cache: dict):
    """``(ok or None, the exists quantifier)`` when ``e`` has the shape above, else None."""
    if not applies(e) or e.step.where is not None or not isinstance(e.type.val, BoolT):
        return None
    body = e.step.body
    if not (isinstance(body, ir.Binary) and body.op == "or"):
        return None
    pair = _own_first(e, body.left, body.right)
    if pair is None:
        return None
    b = pair[1]
    ok = None
    if isinstance(b, ir.Binary) and b.op == "and":
        ok, b = b.left, b.right
    if not _along_edges(e, b, "exists", ok, cache) or (ok is not None and not cannot_fail(ok)):
        return None
    return ok, b


def compile_flood(fseed, fok, fw, fto, e: ir.Fix, quant: ir.Quant, fallback):
    """``fix(st, env)`` for a fix that `flood` recognised: fok, fw and fto are the compiled
    `ok`, filter and target (fok, fw None when absent); ``fallback`` the incremental
    evaluation, used when the search's depth is beyond `within` or the edges cannot be
    found."""
    keys = finite(e.step.domain.elem).values
    n = len(keys)
    where = {k: i for i, k in enumerate(keys)}
    dvals = finite(quant.domain.elem).values
    k1, d1, s1, bound = e.step.slot + 1, quant.slot + 1, e.slot + 1, e.bound
    graph: list = []            # [into or None]: the keys whose exists reads each key

    def edges(st, env):
        into: list[list[int]] = [[] for _ in range(n)]
        try:
            for i, k in enumerate(keys):
                env[k1] = k
                for d in dvals:
                    env[d1] = d
                    if fw is None or fw(st, env):
                        j = where.get(fto(st, env))
                        if j is None:
                            return None
                        into[j].append(i)
        except EvalError:
            return None
        return tuple(tuple(x) for x in into)

    def fix(st, env):
        if bound <= 0:
            return fallback(st, env)
        if not graph:
            graph.append(edges(st, env))
        into = graph[0]
        if into is None:
            return fallback(st, env)
        r = list(fseed(st, env))
        frontier = [i for i in range(n) if r[i]]
        asked = [False] * n         # ok asked (and failed: a key that passed is in r)
        depth = 0
        while frontier:
            nxt = []
            for j in frontier:
                for i in into[j]:
                    if r[i] or asked[i]:
                        continue
                    if fok is not None:
                        env[k1] = keys[i]
                        if not fok(st, env):
                            asked[i] = True
                            continue
                    r[i] = True
                    nxt.append(i)
            if not nxt:
                break
            depth += 1
            if depth > bound:
                return fallback(st, env)
            frontier = nxt
        out = tuple(r)
        env[s1] = out
        return out
    return fix


_SAFE_OPS = frozenset(("==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "and", "or"))


def cannot_fail(e) -> bool:
    """Whether evaluating ``e`` can raise no error, by its shape alone (conservative): no
    seq, no division, no builtin but abs, least and most of integers; a map, bag or set
    indexed only by a local of its key type;
    quantifiers over a type or a range whose bounds cannot fail either; calls of defs whose
    arguments and body cannot fail and whose value needs no check against the declared type."""
    match e:
        case ir.Const() | ir.Local() | ir.StateRef():
            return True
        case ir.Field(record=r):
            return cannot_fail(r)
        case ir.Unary(arg=a):
            return cannot_fail(a)
        case ir.Binary(op=op, left=l, right=r):
            return op in _SAFE_OPS and not isinstance(l.type, (BagT, SeqT)) \
                and cannot_fail(l) and cannot_fail(r)
        case ir.Ite(cond=c, then=a, other=b):
            return cannot_fail(c) and cannot_fail(a) and cannot_fail(b)
        case ir.Index(coll=c, key=k):
            ct = c.type
            if isinstance(ct, SeqT) or not isinstance(k, ir.Local):
                return False
            kt = ct.key if isinstance(ct, MapT) else getattr(ct, "elem", None)
            return k.type == kt and cannot_fail(c)
        case ir.Builtin(name="abs" | "least" | "most", args=args):
            return all(isinstance(a.type, IntT) and cannot_fail(a) for a in args)
        case ir.Call(args=args, body=b, check=chk):
            return chk is None and all(cannot_fail(a) for a in args) and cannot_fail(b)
        case ir.Quant(kind=kind, domain=d, where=w, body=b):
            if kind not in ("forall", "exists", "count", "min", "max"):
                return False            # a sum's or a table's value is built, not tested
            if isinstance(d, ir.RangeDomain):
                if not (cannot_fail(d.lo) and cannot_fail(d.hi)):
                    return False
            elif not isinstance(d, ir.TypeDomain):
                return False
            return (w is None or cannot_fail(w)) and cannot_fail(b)
    return False



# ---- defs of scalar arguments that read no state ------------------------------------------

def scalar(t) -> bool:
    if isinstance(t, (IntT, EnumT, BoolT)):
        return True
    return isinstance(t, RecordT) and all(scalar(ft) for _, ft in t.fields)


def stateless(body, slots, args, cache: dict) -> bool:
    """A def whose value depends only on its arguments, all of them numbers, enums or records of
    these (so finitely many calls): `dx(d)`, `on_board(s, d)`, `shift(s, d)`, `adjacent(a, b)`.
    Parameters and readings are constants of the compiled game, so they are allowed."""
    if not args or not all(scalar(a.type) for a in args):
        return False
    reads, bound, _, _, state = summary(body, cache)
    if state or any(isinstance(n, ir.RealExists) for n in nodes(body)):
        return False
    return reads <= (set(slots) | bound)


def remembered(fb, fargs):
    """The call, remembered for the life of the compiled game by its argument values (the
    interpreter's hot loops call `on_board` and `shift` with the same few hundred values).  An
    evaluation error is not remembered: it is raised again at every call."""
    memo: dict = {}
    if len(fargs) == 1:
        (s1, f1), = fargs
        l1 = getattr(f1, "local", None)     # a local argument is read straight from env

        def call1(st, env):
            a = env[l1] if l1 is not None else f1(st, env)
            hit = memo.get(a, memo)
            if hit is memo:
                env[s1] = a
                hit = memo[a] = fb(st, env)
            return hit
        return call1

    if len(fargs) == 2:
        (s1, f1), (s2, f2) = fargs
        l1, l2 = getattr(f1, "local", None), getattr(f2, "local", None)
        both = l1 is not None and l2 is not None    # `shift(s, d)` in a loop

        def call2(st, env):
            key = (env[l1], env[l2]) if both else (f1(st, env), f2(st, env))
            hit = memo.get(key, memo)
            if hit is memo:
                env[s1], env[s2] = key
                hit = memo[key] = fb(st, env)
            return hit
        return call2

    def call(st, env):
        key = tuple(f(st, env) for _, f in fargs)
        hit = memo.get(key, memo)
        if hit is memo:
            for (s1, _), v in zip(fargs, key):
                env[s1] = v
            hit = memo[key] = fb(st, env)
        return hit
    return call


# ---- one walk per IR node: what a def body reads ---------------------------------------------

_EMPTY = frozenset()
_NOTHING = (_EMPTY, _EMPTY, False, False, False)


def summary(node, cache: dict):
    """``(locals read, slots bound, loops, reads old state, reads state)`` of an IR subtree,
    each node summarised once (``cache`` is keyed by node id and keeps the node alive).  Deeply
    inlined defs repeat the same subtrees at every call: walking each body afresh made compiling
    a spec quadratic in the nesting depth."""
    if isinstance(node, tuple):
        parts = [summary(x, cache) for x in node]
        return _union(parts)
    if not hasattr(node, "__dataclass_fields__"):
        return _NOTHING
    if isinstance(node, (ir.Const, ir.Text)):
        # A constant's value is data (a large table), not IR: nothing to read.
        return _NOTHING
    hit = cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    parts = [summary(getattr(node, f), cache) for f in node.__dataclass_fields__
             if f not in ("type", "span")]
    reads, bound, loops, old, state = _union(parts)
    match node:
        case ir.Local(slot=sl):
            reads = reads | {sl}
        case ir.Quant(slot=sl) | ir.Fix(slot=sl) | ir.ItemGroup(slot=sl):
            bound, loops = bound | {sl}, True
        case ir.Let(slot=sl):
            bound = bound | {sl}
        case ir.Call(slots=ss):
            bound = bound | set(ss)
        case ir.RealExists(slot=sl, family=fam):
            bound, loops = bound | {sl, fam}, True
        case ir.StateRef(old=o):
            state = True
            old = old or o
    res = (reads, bound, loops, old, state)
    cache[id(node)] = (node, res)
    return res


def _union(parts):
    if not parts:
        return _NOTHING
    if len(parts) == 1:
        return parts[0]
    reads = frozenset().union(*(p[0] for p in parts))
    bound = frozenset().union(*(p[1] for p in parts))
    return (reads, bound, any(p[2] for p in parts), any(p[3] for p in parts),
            any(p[4] for p in parts))


def state_fields(node, cache: dict):
    """The indices of the current state's fields an IR subtree reads, or None when it reads
    the state whole (passed to a def, compared) or the old state: a def that reads only
    `height` has the same value in every state with the same heights.  Cached by node id like
    `summary`."""
    if isinstance(node, tuple):
        acc: set = set()
        for x in node:
            f = state_fields(x, cache)
            if f is None:
                return None
            acc |= f
        return frozenset(acc)
    if not hasattr(node, "__dataclass_fields__") or isinstance(node, (ir.Const, ir.Text)):
        return _EMPTY
    hit = cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    if isinstance(node, ir.Field) and isinstance(node.record, ir.StateRef) \
            and not node.record.old:
        res = frozenset((node.index,))
    elif isinstance(node, ir.StateRef):
        res = None
    else:
        acc = set()
        res = None
        for f in node.__dataclass_fields__:
            if f in ("type", "span"):
                continue
            sub = state_fields(getattr(node, f), cache)
            if sub is None:
                break
            acc |= sub
        else:
            res = frozenset(acc)
    cache[id(node)] = (node, res)
    return res


def memoisable(body, slots, cache: dict) -> bool:
    """Whether a def body is worth remembering per state: it loops (a quantifier or a
    fixpoint) and reads nothing but its arguments and the current state (from the cached
    summary)."""
    reads, bound, loops, old, _ = summary(body, cache)
    return loops and not old and reads <= (set(slots) | bound)


# The builtins that are fixpoints too (solver/engine/regions.py: a flood, a count of floods).
REGIONS = ("component", "components")


def computes_fixpoint(node, cache: dict, regions: bool = True) -> bool:
    """Whether an IR subtree computes a `fix` or (with ``regions``) a region builtin, in
    itself or in a def it calls; ``cache`` (one per value of ``regions``) is keyed by node id
    and keeps the node alive."""
    if isinstance(node, tuple):
        return any(computes_fixpoint(x, cache, regions) for x in node)
    if not hasattr(node, "__dataclass_fields__") or isinstance(node, (ir.Const, ir.Text)):
        return False
    hit = cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    r = isinstance(node, ir.Fix) \
        or (regions and isinstance(node, ir.Builtin) and node.name in REGIONS) \
        or any(computes_fixpoint(getattr(node, f), cache, regions)
               for f in node.__dataclass_fields__ if f not in ("type", "span"))
    cache[id(node)] = (node, r)
    return r
