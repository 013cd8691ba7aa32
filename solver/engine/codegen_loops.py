"""The generated code's loops (a mixin of `codegen._Gen`): fixpoints, def calls behind their
memos, and quantifiers, each the same evaluation as the closures' (loops.py, memo.py)."""
from __future__ import annotations

from itertools import compress
from typing import assert_never

from . import fixinc
from .fixinc import cannot_fail
from .memo import FAILS, MEMO_CALLS, PURE_MEMO_SIZE, DefMemo, pure_rate, pure_window
from ..lang import ir
from ..lang.errors import EvalError
from ..lang.irwalk import nodes
from ..lang.types import BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, default, finite
from .values import empty_extreme, fits_check

# The statistics of what was generated (read by the tests: codegen must keep applying).
STATS = {"functions": 0, "compiled": 0, "external": 0, "fallback_roots": 0}


def tuple_source(xs: list[str]) -> str:
    return f"({', '.join(xs)},)" if xs else "()"


def _returned_error(name, v, chk, span):
    return EvalError(f"{name} returned {v!r}, outside its declared type {chk}", span)


def _readers_of(changed, readers):
    """The keys that read an entry that changed, in order (stale readers only cost a
    needless evaluation, as in fixinc)."""
    return sorted({i for j in changed for i in readers[j]})


_HELD: dict = {}
HELD_SIZE = 4096


def held_keys(m, keys):
    """The keys a map to bool holds true, in order: remembered per map value (by identity,
    the value kept alive with them, so that an id is not reused while remembered).  A region
    flooded once per state is asked for its keys by every def that walks it."""
    hit = _HELD.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    if len(_HELD) >= HELD_SIZE:
        _HELD.clear()
    ks = tuple(compress(keys, m))
    _HELD[id(m)] = (m, ks)
    return ks


class LoopGen:
    """Fixpoints, calls and quantifiers, written out (see `codegen._Gen`)."""

    # ---- fixpoints -------------------------------------------------------------------

    def fix_plain(self, e: ir.Fix, out: list) -> str:
        """``fix`` iterated whole, as `Compiler._fix` does when fixinc does not apply."""
        r = self.temp()
        out.append(f"{r} = {self.gen(e.seed, out)}")
        body: list[str] = []
        with self.deeper(loop=True):
            self.bind(e.slot, r, body)
            lines, x = self.here(e.step)
        x = self.atom(x, lines)
        body += lines + [f"if {x} == {r}:", "    break", f"{r} = {x}"]
        self.nested(out, f"for {self.temp()} in range({e.bound}):", body)
        return r

    def fix_incremental(self, e: ir.Fix, out: list) -> str:
        """``fix`` whose step is a table over the map's keys, evaluated as
        `fixinc.compile_fix` does: each key's body again only when an entry it read changed;
        the same result and the same count of steps against `within`."""
        step = e.step
        keys = self.const(finite(step.domain.elem).values)
        n = finite(step.domain.elem).size
        r = self.temp()
        out.append(f"{r} = list({self.gen(e.seed, out)})")
        if e.bound <= 0:
            return f"tuple({r})"
        readers, nxt, todo, steps, i, j, chg, proxy = (self.temp() for _ in range(8))
        out += [f"{readers} = [[] for _ in range({n})]", f"{nxt} = [None] * {n}",
                f"{todo} = range({n})", f"{steps} = 0", f"#PROXY {e.slot} {proxy} {r}"]
        # Each entry read here is entered in its readers' list at once (twice read, twice
        # entered: a reader is looked up through a set); code called from the step
        # (compiled apart) reads r through the proxy, which enters them the same way.
        body = [f"#SEEN {e.slot} {proxy} {readers} {i} {r}"]
        self.comp._recorded.add(e.slot + 1)
        self.fixes[e.slot] = (r, readers, i)
        try:
            with self.deeper(2, loop=True):
                self.bind(step.slot, f"{keys}[{i}]", body)
                if step.where is None:
                    lines, x = self.here(step.body)
                    body += lines + [f"{nxt}[{i}] = {x}"]
                else:
                    wl, w = self.here(step.where)
                    with self.deeper():
                        lines, x = self.here(step.body)
                    body += wl
                    self.nested(body, f"if {w}:", lines + [f"{nxt}[{i}] = {x}"])
                    body += ["else:", f"    {nxt}[{i}] = {self.literal(default(step.type.val))}"]
        finally:
            del self.fixes[e.slot]
            self.comp._recorded.discard(e.slot + 1)
        loop = [f"for {i} in {todo}:"] + ["    " + ln for ln in body]
        # Only the keys evaluated can have changed (the others were copied from r), and
        # they are in order: the changed keys, in the order of a scan of all of them.
        loop += [f"{steps} += 1",
                 f"{chg} = [{j} for {j} in {todo} if {nxt}[{j}] != {r}[{j}]]",
                 f"if not {chg}:", "    break",
                 f"{r} = {nxt}",
                 f"if {steps} >= {e.bound}:", "    break",
                 f"{todo} = {self.const(_readers_of, 'H')}({chg}, {readers})",
                 f"{nxt} = list({r})"]
        self.nested(out, "while True:", loop)
        return f"tuple({r})"

    # ---- calls -----------------------------------------------------------------------

    def call(self, e: ir.Call, out: list) -> str:
        comp = self.comp
        kind, shared = comp._call_memo(e)
        if kind == "remembered" and _straight(e.body):
            # A few operations written out cost less than the key's tuple, its hash and the
            # lookup (and a miss's call): `cell_at(s, r, at, i)` is three additions.
            kind = "inline"
        # All arguments first: an argument may read a slot another one sets.
        xs = [self.atom(x, out) for x in self.seq(e.args, out)]
        slots = e.slots
        decided = _decided_early(e.body) if kind != "inline" else None
        if kind == "inline":
            for s, x in zip(slots, xs):
                self.bind(s, x, out)
            v = self.gen(e.body, out)
        elif decided is not None:
            # `c or rest` (`c implies ...`) with c a few operations: c written out, and the
            # remembered call made only where c does not decide (the body asks c first too,
            # so the value and any error are the same; a remembered value never came from a
            # body that failed).
            op, left = decided
            for s, x in zip(slots, xs):
                self.bind(s, x, out)
            v = self.temp()
            out.append(f"{v} = {self.gen(left, out)}")
            with self.deeper():
                lines: list[str] = []
                w = self.remembered_call(e, kind, shared, xs, slots, lines)
            self.nested(out, f"if {'not ' if op == 'or' else ''}{v}:", lines + [f"{v} = {w}"])
        else:
            v = self.remembered_call(e, kind, shared, xs, slots, out)
        chk = e.check
        if chk is None:
            return v
        v = self.atom(v, out)
        err = f"{self.const(_returned_error, 'H')}({e.name!r}, {v}, {self.const(chk)}, " \
              f"{self.const(e.span, 'S')})"
        if isinstance(chk, IntT):
            self.raise_(out, f"not {chk.lo} <= {v} <= {chk.hi}", err)
        else:
            self.raise_(out, f"not {self.const(fits_check(chk), 'H')}({v})", err)
        return v

    def remembered_call(self, e: ir.Call, kind: str, shared, xs: list, slots, out: list) -> str:
        """The call of ``e``'s body behind its memo (`_call_memo`'s ``kind``), its arguments'
        values in ``xs``: the variable holding its value."""
        comp = self.comp
        fb = self.const(comp.expr(e.body), "F")
        reads, bound, _, _, _ = fixinc.summary(e.body, comp._summaries)
        self.needed |= reads - bound - set(slots)
        STATS["external"] += 1
        v = self.temp()
        key = self.temp()
        put = [f"env[{self.envix(s)}] = {x}" for s, x in zip(slots, xs)]
        paused = None
        if kind == "remembered" and len(xs) == 1:
            out.append(f"{key} = {xs[0]}")
        elif kind == "pure" and any(_large(x.type) for x in e.args):
            # A large value (a seq of records) stands in the key as its number (memo.Idents);
            # remembered only while it hits (memo.pure_rate).
            rate, b = self.const(pure_rate(), "R"), self.temp()
            out.append(f"{b} = {rate}[0]")
            paused = [f"{rate}[0] = {b} + 1"]
            if _inlined_while_paused(e.body):
                # While the memo pauses, the body is written out here (its parameters bound
                # to the arguments, as a straight def's): no call, no arguments through env.
                with self.deeper():
                    for s, x in zip(slots, xs):
                        self.bind(s, x, paused)
                    paused.append(f"{v} = {self.gen(e.body, paused)}")
            else:
                paused += put + [f"{v} = {fb}(st, env)"]
            self.nested(out, f"if {b} < 0:", paused)
            out.append("else:")
            outer, out = out, []
            ident = self.const(comp.idents, "H")
            parts = [f"{ident}({x})" if _large(a.type) else x for x, a in zip(xs, e.args)]
            out.append(f"{key} = {tuple_source(parts)}")
        else:
            out.append(f"{key} = {tuple_source(xs)}")
        if kind == "remembered":
            # fixinc.remembered: one memo per call site, kept for the game's life; the
            # arguments are put in env only when the body runs.
            m = self.const({}, "M")
            out.append(f"{v} = {m}.get({key}, {m})")
            self.nested(out, f"if {v} is {m}:", put + [f"{v} = {m}[{key}] = {fb}(st, env)"])
        else:
            # The arguments are put in env before the lookup by the closures; only the
            # body reads them there, so here they are put only when it runs.
            if kind == "pure":
                # memo.memoised_pure: across states, bounded; shared by the def's generated
                # call sites whose keys are alike (a def that reads no state has one value
                # for given arguments wherever it is called: a table asked by a puzzle's
                # check and then by its start, a real existence asked again by the next
                # step of a fixpoint).  Each site keeps its own rate (`pure_rate`).
                fmt = (e.name, tuple(_large(x.type) for x in e.args)) \
                    if paused is not None else (e.name, None)
                shared_memo = comp._pure_memos.get(fmt)
                if shared_memo is None:
                    shared_memo = comp._pure_memos[fmt] = {}
                m, size = self.const(shared_memo, "M"), PURE_MEMO_SIZE
            else:
                # memo.memoised: the def's memo (shared with its closure call sites),
                # for the state's value of the fields the def reads.
                d = self.const(shared, "D")
                m, size = self.temp(), MEMO_CALLS
                out.append(f"{m} = {d}.memo if st is {d}.last else {d}.switch(st)")
            out.append(f"{v} = {m}.get({key}, {m})")
            count = [] if paused is None else \
                [f"if {b} > 1:", f"    {rate}[0] = {b} - 1",
                 "else:", f"    {self.const(pure_window, 'H')}({rate})"]
            self.nested(out, f"if {v} is {m}:", put + [
                f"if len({m}) >= {size}:", f"    {m}.clear()",
                f"{v} = {m}[{key}] = {fb}(st, env)"] + count)
            if paused is not None:
                out += ["else:", f"    {rate}[1] += 1"]
                outer.extend("    " + ln for ln in out)
                out = outer
        return v

    # ---- quantifiers -----------------------------------------------------------------

    def domain(self, d: ir.Domain, out: list) -> str:
        """An iterable of the domain's values (evaluated here, before the loop)."""
        match d:
            case ir.TypeDomain(elem=t):
                return self.const(finite(t).values)
            case ir.RangeDomain(lo=lo, hi=hi):
                a, b = self.seq((lo, hi), out)
                return f"range({a}, {b} + 1)"
            case ir.CollDomain(coll=c):
                x = self.gen(c, out)
                if isinstance(c.type, SeqT):
                    return x
                values = self.const(finite(c.type.elem).values)
                return f"{self.const(compress, 'H')}({values}, {x})"
            case ir.SubbagDomain():
                raise AssertionError("subbags are enumerated by the query runner")
        assert_never(d)

    def quant(self, e: ir.Quant, out: list) -> str:
        comp = self.comp
        reads, bound, _, old, _ = fixinc.summary(e, comp._summaries)
        if not old and reads <= bound:
            # memo.remembered_value: an expression of the state alone, once per state.
            d = self.const(DefMemo(fixinc.state_fields(e, comp._fields_read)), "D")
            m, v = self.temp(), self.temp()
            out.append(f"{m} = {d}.memo if st is {d}.last else {d}.switch(st)")
            out.append(f"{v} = {m}.get((), {m})")
            lines: list[str] = []
            with self.deeper():
                x = self.loop(e, self.domain(e.domain, lines), e.where, lines)
            self.nested(out, f"if {v} is {m}:", lines + [f"{v} = {m}[()] = {x}"])
            return v
        early = self.first_extreme(e, out)
        if early is not None:
            return early
        held = self.held_map(e)
        if held is not None:
            # `where m[t] and ...` (or `count t in K: m[t]`), m a map to bool read from a
            # local: only the keys m holds true are walked, the same values in the same order.
            it = self.temp()
            keys = self.const(finite(e.domain.elem).values)
            out.append(f"{it} = {self.const(held_keys, 'H')}({self.gen(held, out)}, {keys})")
            if e.where is None:
                return f"len({it})"
            return self.loop(e, it, e.where, out)
        byval = self.table_by_value(e, out)
        if byval is not None:
            return byval
        first = self.table_first(e, out)
        if first is not None:
            return first
        memo = comp._filter_memo(e)
        if memo is None:
            return self.loop(e, self.domain(e.domain, out), e.where, out)
        # memo.remembered_filter: the values that pass the `where`, per state and value
        # of the outer locals it reads.  A filter that fails on some value is remembered as
        # failing (`FAILS`), and the loop then asks it value by value, as the closures do: it
        # may stop before the failure.
        shared, outer = memo
        d = self.const(shared, "D")
        fails = self.const(FAILS, "K")
        m, k, vals = self.temp(), self.temp(), self.temp()
        out.append(f"{m} = {d}.memo if st is {d}.last else {d}.switch(st)")
        keys = [self.local(i - 1) for i in outer]
        out.append(f"{k} = {tuple_source(keys)}")
        out.append(f"{vals} = {m}.get({k})")
        tried: list[str] = []
        with self.deeper(2, loop=True):
            dom = self.domain(e.domain, tried)
            body: list[str] = []
            with self.deeper(loop=True):
                self.bind_loop(e.slot, body)
                wl, w = self.here(e.where)
            body += wl + [f"if {w}:", f"    {vals}.append({self.var(e.slot)})"]
            self.nested(tried, f"for {self.var(e.slot)} in {dom}:", body)
        fill = [f"{vals} = []", "try:"] + ["    " + ln for ln in tried]
        fill += [f"except {self.const(EvalError, 'H')}:", f"    {vals} = {fails}",
                 f"if len({m}) >= {MEMO_CALLS}:", f"    {m}.clear()",
                 f"{m}[{k}] = {vals}"]
        self.nested(out, f"if {vals} is None:", fill)
        lazy = self.temp()
        out.append(f"{lazy} = {vals} is {fails}")
        again: list[str] = []
        with self.deeper():
            dom2 = self.domain(e.domain, again)
        if again:
            self.nested(out, f"if {lazy}:", again)
        it = self.temp()
        out.append(f"{it} = {dom2} if {lazy} else {vals}")
        return self.loop(e, it, e.where, out, lazy=lazy)

    def table_first(self, e: ir.Quant, out: list) -> str | None:
        """`table s in K: c1 and c2 and ...` where c1 reads no state, nothing but s and outer
        locals of scalar types, and cannot fail (`adjacent(a, s)`): c1's values for every key
        are remembered per value of those locals, and the rest of the chain is asked only of
        the keys where c1 holds, in order (the others' value is c1's).  A flood's seed beside
        one square walks its four neighbours, not the 64 squares.  None for any other."""
        if e.kind != "table" or e.where is not None or not isinstance(e.domain, ir.TypeDomain):
            return None
        conj: list = []
        x = e.body
        while isinstance(x, ir.Binary) and x.op == "and":
            conj.append(x.right)
            x = x.left
        if not conj:
            return None
        conj.append(x)
        conj.reverse()
        c1 = conj[0]
        reads, bound, _, old, state = fixinc.summary(c1, self.comp._summaries)
        if state or old or not fixinc.cannot_fail(c1):
            return None
        outer = sorted(reads - bound - {e.slot})
        kinds = {n.slot: n.type for n in nodes(c1) if isinstance(n, ir.Local)}
        if not all(fixinc.scalar(kinds[o]) for o in outer):
            return None
        keys = self.const(finite(e.domain.elem).values)
        pm = self.const({}, "M")
        k, pre, vals, acc, i, y = (self.temp() for _ in range(6))
        out.append(f"{k} = {tuple_source([self.local(o) for o in outer])}")
        out.append(f"{pre} = {pm}.get({k})")
        fill: list[str] = [f"{vals} = []"]
        with self.deeper(2, loop=True):
            body: list[str] = []
            self.bind_loop(e.slot, body)
            lines, c = self.here(c1)
            body += lines + [f"{vals}.append({c})"]
        self.nested(fill, f"for {self.var(e.slot)} in {keys}:", body)
        fill += [f"if len({pm}) >= {MEMO_CALLS}:", f"    {pm}.clear()",
                 f"{pre} = {pm}[{k}] = ({vals}, "
                 f"tuple([{i} for {i}, {y} in enumerate({vals}) if {y}]))"]
        self.nested(out, f"if {pre} is None:", fill)
        out.append(f"{acc} = list({pre}[0])")
        body = [f"{self.var(e.slot)} = {keys}[{i}]"]
        with self.deeper(loop=True):
            self.bind_loop(e.slot, body)
            t = self.temp()
            lines, c = self.here(conj[1])
            body += lines + [f"{t} = {c}"]
            for cn in conj[2:]:
                lines, c = self.sub(cn)
                self.nested(body, f"if {t}:", lines + [f"{t} = {c}"])
        body.append(f"{acc}[{i}] = {t}")
        self.nested(out, f"for {i} in {pre}[1]:", body)
        out.append(f"{acc} = tuple({acc})")
        return acc

    def table_by_value(self, e: ir.Quant, out: list) -> str | None:
        """`table c in K: body` whose body reads c only as `m[c]`, m an outer local map over
        K with far fewer values than keys (a few dozen distinct numbers over a thousand
        keys): the body is evaluated once per distinct entry of m, in the order the
        keys first meet it (so the first error is the one the walk of every key raises), and
        the table is read off those values.  When the table has m's type and every value comes
        out unchanged, it is m itself (a copy that removes nothing).  None for any other table, or
        when code called from the body would read c in env."""
        if e.kind != "table" or e.where is not None or not isinstance(e.domain, ir.TypeDomain):
            return None
        maps = _maps_at(e, self.comp._summaries)
        if len(maps) != 1:
            return None
        m = maps[0]
        mt = self.comp_local_type(e, m)
        if mt is None or not isinstance(mt.val, (IntT, BoolT, EnumT)) \
                or BY_VALUE_RATIO * finite(mt.val).size > finite(mt.key).size \
                or m in self.fixes or m + 1 in self.comp._recorded:
            return None
        reads = [n for n in nodes(e.body) if isinstance(n, ir.Local) and n.slot == e.slot]
        at = [n for n in nodes(e.body) if isinstance(n, ir.Index) and isinstance(n.key, ir.Local)
              and n.key.slot == e.slot and isinstance(n.coll, ir.Local) and n.coll.slot == m]
        if len(reads) != len(at):
            return None
        d, x, r, acc = self.temp(), self.temp(), self.temp(), self.temp()
        body: list[str] = []
        self.zips[m, e.slot] = x
        try:
            with self.deeper(loop=True):
                lb, b = self.here(e.body)
        finally:
            del self.zips[m, e.slot]
        if e.slot in self.needed:
            return None                 # an external part reads c: the walk of every key
        same = e.type == mt
        body += lb + [f"{r} = {b}", f"{d}[{x}] = {r}"]
        if same:
            body += [f"if {r} != {x}:", f"    {acc} = None"]
        mv = self.local(m)
        out.append(f"{d} = dict.fromkeys({mv})")
        out.append(f"{acc} = {mv}")
        self.nested(out, f"for {x} in {d}:", body)
        if same:
            self.nested(out, f"if {acc} is None:", [f"{acc} = tuple(map({d}.__getitem__, {mv}))"])
        else:
            out.append(f"{acc} = tuple(map({d}.__getitem__, {mv}))")
        return acc

    def comp_local_type(self, e: ir.Quant, slot: int):
        """The map type of the outer local ``slot`` that ``e`` reads at its binder."""
        for n in nodes(e.body):
            if isinstance(n, ir.Index) and isinstance(n.coll, ir.Local) and n.coll.slot == slot:
                return n.coll.type if isinstance(n.coll.type, MapT) else None
        return None

    def first_extreme(self, e: ir.Quant, out: list) -> str | None:
        """``min t in lo..hi where w: t`` (``max`` likewise, from the top): the first value
        of the range that passes ``w`` is the answer, so the loop stops there, when ``w``
        cannot fail (`cannot_fail`: no later value could raise the error the whole walk
        would).  A track's next free space is its first one, not the least of 400 (and no
        filter of all of them is remembered).  None for any other quantifier."""
        if e.kind not in ("min", "max") or e.where is None \
                or not isinstance(e.domain, ir.RangeDomain) \
                or not (isinstance(e.body, ir.Local) and e.body.slot == e.slot) \
                or not cannot_fail(e.where):
            return None
        a, b = self.seq((e.domain.lo, e.domain.hi), out)
        it = f"range({a}, {b} + 1)" if e.kind == "min" else f"range({b}, {a} - 1, -1)"
        acc = self.temp()
        out.append(f"{acc} = None")
        body: list[str] = []
        with self.deeper(loop=True):
            self.bind_loop(e.slot, body)
            wl, w = self.here(e.where)
        body += wl + [f"if {w}:", f"    {acc} = {self.var(e.slot)}", "    break"]
        self.nested(out, f"for {self.var(e.slot)} in {it}:", body)
        out += [f"if {acc} is None:", f"    {acc} = {empty_extreme(e.type)}"]
        return acc

    def held_map(self, e: ir.Quant) -> "ir.Local | None":
        """The local m when e walks a type's values t under `where m[t] and ...` (its first
        conjunct), or is `count t in K: m[t]`, and m maps that type to bool."""
        if e.kind == "table" or not isinstance(e.domain, ir.TypeDomain):
            return None
        if e.where is None:
            first = e.body if e.kind == "count" else None
        else:
            first = e.where
            while isinstance(first, ir.Binary) and first.op == "and":
                first = first.left
        if not (isinstance(first, ir.Index) and isinstance(first.key, ir.Local)
                and first.key.slot == e.slot and isinstance(first.coll, ir.Local)
                and first.coll.slot != e.slot):
            return None
        t = first.coll.type
        if not (isinstance(t, MapT) and t.key == e.domain.elem and isinstance(t.val, BoolT)):
            return None
        return first.coll

    def here(self, e: ir.Expr) -> tuple[list, str]:
        """Generate ``e`` into lines of its own, at the current depth."""
        lines: list[str] = []
        x = self.gen(e, lines)
        return lines, x

    def loop(self, e: ir.Quant, it: str, where, out: list, lazy: str | None = None) -> str:
        """The quantifier's loop over the iterable ``it``.  With ``lazy`` (a remembered
        filter), ``it`` holds only values that pass the `where` unless that flag is true, and
        the `where` is asked only then; as in the closures, a `table` then leaves out the
        values that fail it."""
        kind, s = e.kind, e.slot
        acc = self.temp()
        init = {"forall": "True", "exists": "False", "sum": "0", "count": "0", "table": "[]",
                "max": "None", "min": "None"}[kind]
        out.append(f"{acc} = {init}")
        # Over every key of a map in order (its type's values): the entries of the maps of
        # outer locals that the loop reads at its binder come with it, zipped, not looked up.
        zipped = []
        if isinstance(e.domain, ir.TypeDomain) \
                and self.by_id.get(id(finite(e.domain.elem).values)) == it:
            for m in _maps_at(e, self.comp._summaries):
                if m not in self.fixes and m + 1 not in self.comp._recorded:
                    zipped.append((self.local(m), self.temp()))
                    self.zips[m, s] = zipped[-1][1]
        body: list[str] = []
        with self.deeper(loop=True):
            self.bind_loop(s, body)
            skip = where is not None and (kind != "table" or lazy is not None)
            if skip:
                wl, w = self.here(where)
                test = wl + [f"if not {w}:", "    continue"]
                if lazy is None:
                    body += test
                else:
                    self.nested(body, f"if {lazy}:", test)
            if kind == "table" and where is not None and not skip:
                dflt = self.literal(default(e.type.val))
                wl, w = self.here(where)
                with self.deeper():
                    lb, b = self.here(e.body)
                body += wl
                self.nested(body, f"if {w}:", lb + [f"{acc}.append({b})"])
                body += ["else:", f"    {acc}.append({dflt})"]
            else:
                lb, b = self.here(e.body)
                body += lb
                match kind:
                    case "forall":
                        body += [f"if not {b}:", f"    {acc} = False", "    break"]
                    case "exists":
                        body += [f"if {b}:", f"    {acc} = True", "    break"]
                    case "count":
                        body += [f"if {b}:", f"    {acc} += 1"]
                    case "sum":
                        body += [f"{acc} += {b}"]
                    case "table":
                        body += [f"{acc}.append({b})"]
                    case "max" | "min":
                        b = self.atom(b, body)
                        cmp = ">" if kind == "max" else "<"
                        body += [f"if {acc} is None or {b} {cmp} {acc}:", f"    {acc} = {b}"]
        if zipped:
            names = ", ".join(x for _, x in zipped)
            maps = ", ".join(m for m, _ in zipped)
            self.nested(out, f"for {self.var(s)}, {names} in zip({it}, {maps}):", body)
        else:
            self.nested(out, f"for {self.var(s)} in {it}:", body)
        if kind == "table":
            out.append(f"{acc} = tuple({acc})")
        elif kind in ("max", "min"):
            out.append(f"if {acc} is None:")
            out.append(f"    {acc} = {empty_extreme(e.type)}")
        return acc


# A table walks the distinct entries of the map it reads (`table_by_value`) when the map's
# value type has at most one value in this many of its keys.
BY_VALUE_RATIO = 8

# A def body of at most this many IR nodes, with no call, loop or fixpoint, is written out at
# each call site rather than remembered by its arguments (`fixinc.remembered`).
STRAIGHT_NODES = 48


def _maps_at(e: ir.Quant, summaries: dict) -> list:
    """The slots of the locals, bound outside the quantifier ``e`` over a type, that are
    maps keyed by that type and read at e's binder (``m[c]``), in order of appearance."""
    bound = fixinc.summary(e, summaries)[1]
    out: dict = {}
    for n in nodes((e.where, e.body) if e.where is not None else e.body):
        if isinstance(n, ir.Index) and isinstance(n.key, ir.Local) and n.key.slot == e.slot \
                and isinstance(n.coll, ir.Local) and n.coll.slot not in bound \
                and isinstance(n.coll.type, MapT) and n.coll.type.key == e.domain.elem:
            out[n.coll.slot] = None
    return list(out)


def _decided_early(body: ir.Expr) -> tuple | None:
    """``(op, c)`` when a def body is ``c or rest`` or ``c and rest`` (through `if`s on
    constants: a reading's test) with ``c`` a few operations (`_straight`) and ``rest`` not:
    c alone decides the value wherever it is true (false).  None for any other body."""
    while isinstance(body, ir.Ite) and isinstance(body.cond, ir.Binary) \
            and body.cond.op in ("==", "!=") and isinstance(body.cond.left, ir.Const) \
            and isinstance(body.cond.right, ir.Const):
        same = body.cond.left.value == body.cond.right.value
        body = body.then if same == (body.cond.op == "==") else body.other
    if isinstance(body, ir.Binary) and body.op in ("or", "and") and _straight(body.left) \
            and not _straight(body.right):
        return body.op, body.left
    return None


def _straight(body: ir.Expr) -> bool:
    """Whether ``body`` is a few operations in a row (see `STRAIGHT_NODES`)."""
    n = 0
    for x in nodes(body):
        n += 1
        if n > STRAIGHT_NODES or isinstance(x, (ir.Call, ir.Quant, ir.Fix, ir.RealExists)):
            return False
    return True


# A def body behind a memo that pauses (`memo.pure_rate`) is also written out at its call
# site, for the calls made while it pauses, when it has at most this many IR nodes (as
# `irwalk.nodes` counts them) and no fixpoint nor real unknowns: a small loop (every key of
# a small set checked) costs less than the call and its arguments passed through env.
PAUSED_INLINE_NODES = 256


def _inlined_while_paused(body: ir.Expr) -> bool:
    n = 0
    for x in nodes(body):
        n += 1
        if n > PAUSED_INLINE_NODES or isinstance(x, (ir.Fix, ir.RealExists, ir.RealVar,
                                                     ir.Largest, ir.Reachable)) \
                or (isinstance(x, ir.Quant) and isinstance(x.domain, ir.SubbagDomain)):
            return False
    return True


def _large(t) -> bool:
    """Whether values of type ``t`` are tuples that hold tuples or many items (hashing them
    costs more than a call).  A record of a few scalars (a cell's coordinates) is hashed
    sooner than it is looked up by identity."""
    if isinstance(t, RecordT):
        return len(t.fields) > 4 or not all(isinstance(ft, (IntT, BoolT, EnumT))
                                            for _, ft in t.fields)
    return isinstance(t, (SeqT, MapT, BagT))
