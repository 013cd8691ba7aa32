"""Python source for concrete expressions: an IR subtree becomes one Python function.

The closure interpreter (`evaluate.Compiler`) calls one closure per IR node, and a Python call
costs far more than the arithmetic or comparison it carries out.  Here the largest subtree
made of the node kinds handled below is written out as the source of one function
``f(st, env)``, with inline arithmetic, comparisons, loops, `if`s and `let`s, and compiled by
`compile()`.  Whatever is not written out (the node kinds listed in `_EXTERNAL`, a def body
behind a memo, a subtree nested too deep for Python) is compiled by the `Compiler` (whose
`expr` comes back here for the subtrees below it) and called from the generated code: the
two kinds of code mix freely, and both read and write locals in ``env`` the same way.

Semantics are the closure interpreter's, exactly: the same values, the same `EvalError`s with
the same spans, in the same order (an operand is evaluated before the next one; `and`, `or`
and the quantifiers stop where the closures stop), and the same memos, shared with the
closures (a def's `memo.DefMemo`) or of the same shape (per call site, per quantifier).
The loops (fixpoints, calls, quantifiers) are written by the mixin of codegen_loops.py.

Locals: a local bound in the generated function lives in a Python variable; it is also
written to ``env[slot + 1]`` when code called from here reads it (a def body behind a memo
reads its parameters there).  A local of the caller is read from env once.  Slots are unique
in a frame (`check.Frame` never reuses one), so a variable is never rebound while an
enclosing expression still needs it, and nothing called from here sets a caller's local.
"""
from __future__ import annotations

import linecache
import re
from contextlib import contextmanager
from operator import add, le, sub
from types import CodeType, FunctionType
from typing import assert_never

from . import fixinc
from .codegen_loops import STATS, LoopGen, tuple_source
from .values import key_error, narrow_int
from ..lang import ir
from ..lang.errors import EvalError
from ..lang.types import BagT, EnumT, IntT, MapT, RecordT, SeqT, SetT, finite

# Python refuses more than 20 nested loops or `try`s in one function, and deep indentation:
# a subtree nested deeper is compiled apart (its own generated function).
MAX_LOOPS = 12
MAX_INDENT = 40
# A pure expression longer than this is stored in a temporary: it keeps the parser's nesting
# of parentheses shallow.
MAX_INLINE = 400

# Node kinds never written out: `exists real` is lowered by linear.py, `f[k]` only inside it;
# `largest` sorts its items in the closure (its values and counts are generated code).
_EXTERNAL = (ir.RealExists, ir.RealVar, ir.Largest, ir.Reachable)

# Write each function's source at its first call (False: when it is compiled, for a test that
# changes how the Compiler decides, around the compilation only).
LAZY = True

# Generated code by source text: the same def inlined at many call sites gives the same text
# (its locals and env indices are named in order of appearance), compiled once.
CODE_CACHE = 1 << 14
_CODE: dict = {}
_SOURCES: list = []
_GLOBALS = {"__builtins__": __builtins__}


def compile_expr(comp, e: ir.Expr):
    """A generated ``f(st, env)`` for ``e``, or None when e's own kind is not generated (the
    caller then builds its closure, whose children come back here).

    The source is written when ``f`` is first called, not before: a game has far more
    expressions than one run evaluates.  Then ``f`` takes the generated code as its own, so
    that its callers call the generated code directly from the next call on."""
    if isinstance(e, _EXTERNAL) or (isinstance(e, ir.Quant)
                                    and isinstance(e.domain, ir.SubbagDomain)):
        STATS["fallback_roots"] += 1
        return None
    # The one piece of the Compiler's context that the code depends on: which locals are a
    # fixpoint's value whose reads are recorded (see Compiler._fix).
    recorded = set(comp._recorded)

    def build():
        saved = comp._recorded
        comp._recorded = set(recorded)
        try:
            g = _Gen(comp).function(e)
        finally:
            comp._recorded = saved
        if LAZY:
            lazy.__code__ = g.__code__
            lazy.__defaults__ = g.__defaults__
            lazy.source = g.source
        return g

    if not LAZY:
        return build()

    def lazy(st, env, _build=build):
        return _build()(st, env)
    lazy.build = build
    return lazy


def source_of(f) -> str | None:
    """The generated source of ``f`` (built now if it was not yet), or None for a closure."""
    if getattr(f, "build", None) is not None and getattr(f, "source", None) is None:
        f.build()
    return getattr(f, "source", None)


_ATOMIC = re.compile(r"(_t\d+|v\d+|f\d+|[A-Z]+\d+|st|True|False|None|\(?-?\d+\)?"
                     r"|'[^']*'|\"[^\"]*\")$")


def _seq_index_error(i, s, span):
    return EvalError(f"index {i} is outside a seq of length {len(s)}", span)


# `map` over the operator: a generator costs twice as much on a bag of 80 counts.
def _bag_add(a, b):
    return tuple(map(add, a, b))


def _bag_sub(a, b):
    return tuple(map(sub, a, b))


def _bag_le(a, b):
    return all(map(le, a, b))


def _lookup(e) -> tuple | None:
    """``(skeleton, locals)`` of ``e`` when it is an entry of a constant table read by keys
    in its key types' ranges (locals of an enum or of a range within the key's, from 0, or
    constants): one that cannot fail; None for anything else."""
    if not isinstance(e, ir.Index) or not isinstance(e.coll.type, MapT):
        return None
    kt, k = e.coll.type.key, e.key
    if isinstance(kt, EnumT):
        ok = k.type == kt
    elif isinstance(kt, IntT) and kt.lo == 0:
        ok = isinstance(k.type, IntT) and 0 <= k.type.lo and k.type.hi <= kt.hi
    else:
        return None
    if not ok:
        return None
    if isinstance(k, ir.Local):
        key, slots = ("L", k.slot), frozenset((k.slot,))
    elif isinstance(k, ir.Const) and type(k.value) is int:
        key, slots = ("C", k.value), frozenset()
    else:
        return None
    if isinstance(e.coll, ir.Const):
        return ("I", id(e.coll.value), key), slots
    inner = _lookup(e.coll)
    if inner is None:
        return None
    return ("I", inner[0], key), inner[1] | slots


def _lookups(e, found: dict) -> None:
    """Gather into ``found`` (by `_lookup`) the widest such look-ups of ``e`` that every
    evaluation of ``e`` makes: through arithmetic, fields, records and seqs only."""
    got = _lookup(e)
    if got is not None:
        found.setdefault(got, []).append(e)
        return
    match e:
        case ir.Binary(op="+" | "-" | "*", left=a, right=b):
            _lookups(a, found)
            _lookups(b, found)
        case ir.Unary(op="neg", arg=a) | ir.Field(record=a):
            _lookups(a, found)
        case ir.RecordLit(items=items) | ir.SeqLit(items=items):
            for x in items:
                _lookups(x, found)


class _Gen(LoopGen):
    """The source of one function, built by a walk of its IR subtree."""

    def __init__(self, comp):
        self.comp = comp
        self.names: list[str] = []      # the factory's parameters: constants and helpers
        self.values: list = []
        self.by_id: dict = {}           # id(value) -> its name (values held in self.values)
        self.ntemp = 0
        self.scope: set = set()         # slots bound here, held in Python variables
        self.vars: dict = {}            # slot -> its Python variable
        self.envs: dict = {}            # slot -> the parameter holding slot + 1
        self.fixes: dict = {}           # fixpoint slot -> (its values, its reads) variables
        self.free: dict = {}            # slot of a caller's local read here -> its variable
        self.cse: dict = {}             # id of a table look-up -> the temporary holding it
        self.zips: dict = {}            # (map slot, loop slot) -> the loop's entry variable
        self.needed: set = set()        # slots that code called from here reads in env
        self.loops = 0                  # nested loops and `try`s around the current point
        self.indent = 0                 # nested indented suites of any kind

    # ---- the function ----------------------------------------------------------------

    def function(self, e: ir.Expr):
        body: list[str] = []
        x = self.gen(e, body)
        lines = []
        for ln in body:
            stripped = ln.lstrip(" ")
            if stripped.startswith("#"):
                # What code called from here reads in env, written only if it does.
                pad = "    " + ln[:len(ln) - len(stripped)]
                what, slot, *names = stripped[1:].split()
                s = int(slot)
                if s not in self.needed:
                    continue
                if what == "ENV":
                    lines.append(f"{pad}env[{self.envix(s)}] = {self.var(s)}")
                elif what == "PROXY":       # a fixpoint's values, reads recorded (fixinc)
                    proxy, r = names
                    lines.append(f"{pad}{proxy} = {self.const(fixinc.Reads, 'H')}({r})")
                    lines.append(f"{pad}env[{self.envix(s)}] = {proxy}")
                elif what == "SEEN":
                    proxy, readers, i, r = names
                    lines.append(f"{pad}{proxy}.seen = {self.const(fixinc.Into, 'H')}"
                                 f"({readers}, {i})")
                    lines.append(f"{pad}{proxy}.vals = {r}")
                continue
            lines.append("    " + ln)
        lines[:0] = [f"    {v} = env[{self.envix(s)}]" for s, v in self.free.items()]
        # The constants are parameters with defaults: read as fast locals, and the code
        # does not depend on them (it is shared by every def body that gives the same text).
        src = "\n".join([f"def f(st, env, {', '.join(self.names)}):" if self.names
                         else "def f(st, env):"] + lines + [f"    return {x}", ""])
        code = _CODE.get(src)
        if code is None:
            if len(_CODE) >= CODE_CACHE:
                # Bounded, like the memos: a long run that loads game after game would
                # otherwise keep every source it ever wrote.
                _CODE.clear()
                for old in _SOURCES:
                    linecache.cache.pop(old, None)
                _SOURCES.clear()
            STATS["compiled"] += 1
            name = f"<rules codegen {STATS['compiled']}>"
            # Kept for tracebacks and for reading the generated code.
            linecache.cache[name] = (len(src), None, src.splitlines(True), name)
            _SOURCES.append(name)
            module = compile(src, name, "exec")
            code = _CODE[src] = next(c for c in module.co_consts if isinstance(c, CodeType))
        STATS["functions"] += 1
        f = FunctionType(code, _GLOBALS, "f", tuple(self.values))
        f.source = src
        return f

    # ---- helpers ---------------------------------------------------------------------

    def const(self, v, hint: str = "K") -> str:
        """The name under which the generated code sees the Python object ``v``."""
        hit = self.by_id.get(id(v))
        if hit is not None:
            return hit
        name = f"{hint}{len(self.names)}"
        self.names.append(name)
        self.values.append(v)
        self.by_id[id(v)] = name
        return name

    def literal(self, v) -> str:
        if type(v) is bool or v is None:
            return repr(v)
        if type(v) is int:
            return repr(v) if v >= 0 else f"({v})"
        if type(v) is str:
            return repr(v)
        return self.const(v)

    def temp(self) -> str:
        self.ntemp += 1
        return f"_t{self.ntemp}"

    @staticmethod
    def atomic(x: str) -> bool:
        """An expression whose value cannot change nor fail while an expression holding it
        waits: a temporary, a local's variable (rebound only by its own binder), a name of
        the constants table, a literal."""
        return _ATOMIC.match(x) is not None

    def atom(self, x: str, out: list) -> str:
        if self.atomic(x):
            return x
        t = self.temp()
        out.append(f"{t} = {x}")
        return t

    @staticmethod
    def nested(out: list, header: str, lines: list):
        out.append(header)
        if lines:
            out.extend("    " + ln for ln in lines)
        else:
            out.append("    pass")

    @contextmanager
    def deeper(self, levels: int = 1, loop: bool = False):
        """Code generated meanwhile goes ``levels`` suites deeper (one of them a loop)."""
        self.indent += levels
        self.loops += loop
        try:
            yield
        finally:
            self.indent -= levels
            self.loops -= loop

    def sub(self, e: ir.Expr) -> tuple[list, str]:
        """Generate ``e`` into a suite nested one level deeper."""
        with self.deeper():
            return self.here(e)

    def seq(self, es, out: list) -> list[str]:
        """Generate ``es`` in order: an operand whose code has statements comes after the
        earlier operands' values are stored, so the order of evaluation is the closures'."""
        xs: list[str] = []
        for e in es:
            lines: list[str] = []
            x = self.gen(e, lines)
            if lines:
                xs = [self.atom(y, out) for y in xs]
                out.extend(lines)
            xs.append(x)
        return xs

    def narrowed(self, x: str, src, kt, span, out: list) -> str:
        """``x``, an int key of static type ``src``, checked to be one of the keys ``kt``
        where ``src`` may leave them (as `Compiler._key_expr`)."""
        t = narrow_int(src, kt)
        if t is None:
            return x
        x = self.atom(x, out)
        self.raise_(out, f"not {t.lo} <= {x} <= {t.hi}",
                    f"{self.const(key_error, 'H')}({x}, {self.const(t)}, "
                    f"{self.const(span, 'S')})")
        return x

    def external(self, fn, e, out: list) -> str:
        """A call of compiled code ``fn`` for the subtree ``e``: what it reads in env must be
        there."""
        reads, bound, _, _, _ = fixinc.summary(e, self.comp._summaries)
        self.needed |= reads - bound
        STATS["external"] += 1
        t = self.temp()
        out.append(f"{t} = {self.const(fn, 'F')}(st, env)")
        return t

    def bind(self, slot: int, x: str, out: list):
        out.append(f"{self.var(slot)} = {x}")
        self.bind_loop(slot, out)

    def bind_loop(self, slot: int, out: list):
        """``v<slot>`` was just set (by a loop): put it in env too if need be."""
        out.append(f"#ENV {slot}")
        self.scope.add(slot)

    def local(self, slot: int) -> str:
        if slot in self.scope:
            return self.var(slot)
        # A local of the caller: read from env once, at the function's start (nothing here
        # sets it: slots are unique, and what this code calls binds slots of its own).
        v = self.free.get(slot)
        if v is None:
            v = self.free[slot] = f"f{len(self.free)}"
        return v

    def var(self, slot: int) -> str:
        """The Python variable of a slot bound here (numbered in order of appearance, so
        that a def body inlined at two call sites gives the same source)."""
        v = self.vars.get(slot)
        if v is None:
            v = self.vars[slot] = f"v{len(self.vars)}"
        return v

    def envix(self, slot: int) -> str:
        """The name of ``slot + 1``, the slot's index in env (a parameter, for the same
        reason)."""
        n = self.envs.get(slot)
        if n is None:
            n = self.envs[slot] = f"E{len(self.names)}"
            self.names.append(n)
            self.values.append(slot + 1)
        return n

    def raise_(self, out: list, cond: str, err: str):
        out.append(f"if {cond}:")
        out.append(f"    raise {err}")

    # ---- expressions -----------------------------------------------------------------

    def gen(self, e: ir.Expr, out: list) -> str:
        if self.indent > MAX_INDENT or self.loops > MAX_LOOPS:
            if not isinstance(e, (ir.Const, ir.Text, ir.Local, ir.StateRef)):
                return self.external(self.comp.expr(e), e, out)
        x = self.node(e, out)
        if len(x) > MAX_INLINE:
            x = self.atom(x, out)
        return x

    def node(self, e: ir.Expr, out: list) -> str:
        match e:
            case ir.Const(value=v) | ir.Text(value=v):
                return self.literal(v)
            case ir.Local(slot=s):
                return self.local(s)
            case ir.StateRef(old=old):
                return "env[0]" if old else "st"
            case ir.Field(record=rec, index=i):
                return f"{self.gen(rec, out)}[{i}]"
            case ir.Index():
                return self.index(e, out)
            case ir.Unary(op=op, arg=a):
                x = self.gen(a, out)
                return f"(-{x})" if op == "neg" else f"(not {x})"
            case ir.Binary():
                return self.binary(e, out)
            case ir.Ite(cond=c, then=a, other=b):
                cx = self.gen(c, out)
                la, xa = self.sub(a)
                lb, xb = self.sub(b)
                if not la and not lb:
                    return f"({xa} if {cx} else {xb})"
                t = self.temp()
                self.nested(out, f"if {cx}:", la + [f"{t} = {xa}"])
                self.nested(out, "else:", lb + [f"{t} = {xb}"])
                return t
            case ir.Let(slot=s, value=v, body=b):
                self.bind(s, self.gen(v, out), out)
                return self.gen(b, out)
            case ir.Call():
                return self.call(e, out)
            case ir.Builtin():
                return self.builtin(e, out)
            case ir.Member():
                return self.member(e, out)
            case ir.RecordLit(items=items) | ir.SeqLit(items=items):
                shared = self.shared_lookups(items, out)
                x = tuple_source(self.seq(items, out))
                for n in shared:
                    del self.cse[id(n)]
                return x
            case ir.BagLit(type=t, items=items):
                return self.baglit(t, items, out)
            case ir.With(record=rec, updates=ups) if isinstance(e.type, RecordT) \
                    and len(e.type.fields) <= 8:
                # A small record: the new tuple written out, not a list copied and frozen.
                base = self.atom(self.gen(rec, out), out)
                parts = [f"{base}[{i}]" for i in range(len(e.type.fields))]
                for i, u in ups:
                    parts[i] = self.atom(self.gen(u, out), out)
                return tuple_source(parts)
            case ir.With(record=rec, updates=ups):
                r = self.temp()
                out.append(f"{r} = list({self.gen(rec, out)})")
                for i, u in ups:
                    x = self.gen(u, out)
                    out.append(f"{r}[{i}] = {x}")
                out.append(f"{r} = tuple({r})")
                return r
            case ir.Quant():
                if isinstance(e.domain, ir.SubbagDomain):
                    return self.external(self.comp._closure(e), e, out)
                return self.quant(e, out)
            case ir.Fix():
                if fixinc.min_plus(e, self.comp._summaries) is not None \
                        or fixinc.flood(e, self.comp._summaries) is not None:
                    # Shortest paths or a flood (fixinc), by the closures.
                    return self.external(self.comp._closure(e), e, out)
                if fixinc.applies(e):
                    return self.fix_incremental(e, out)
                return self.fix_plain(e, out)
            case ir.RealExists() | ir.RealVar() | ir.Largest() | ir.Reachable():
                return self.external(self.comp._closure(e), e, out)
            case _:
                assert_never(e)

    def key(self, kt, x: str, out: list) -> str:
        """The ordinal of key ``x`` in the key type (as `Compiler._key`)."""
        if isinstance(kt, EnumT) or (isinstance(kt, IntT) and kt.lo == 0):
            return x
        if isinstance(kt, IntT):
            return f"({x} - {kt.lo})"
        return f"{self.const(finite(kt).index, 'IX')}[{x}]"

    def shared_lookups(self, items, out: list) -> list:
        """Look up once, before the items, a constant table's entry that they read more than
        once (`R(T[k][i].x, T[k][i].y, ...)`, T a constant table): the look-ups
        `_lookup` takes cannot fail and are read on every path, so their value is the same
        and no error moves.  The nodes so shared (the caller forgets them after the items)."""
        found: dict = {}
        for x in items:
            _lookups(x, found)
        bound = fixinc.summary(tuple(items), self.comp._summaries)[1]
        shared = []
        for (skeleton, slots), ns in found.items():
            if len(ns) < 2 or slots & bound:
                continue
            t = self.atom(self.gen(ns[0], out), out)
            for n in ns:
                self.cse[id(n)] = t
            shared.extend(ns)
        return shared

    def index(self, e: ir.Index, out: list) -> str:
        hit = self.cse.get(id(e))
        if hit is not None:
            return hit
        if isinstance(e.coll, ir.Local) and isinstance(e.key, ir.Local):
            hit = self.zips.get((e.coll.slot, e.key.slot))
            if hit is not None:
                return hit
        ct = e.coll.type
        if isinstance(e.coll, ir.Local) and e.coll.slot in self.fixes:
            c, k = "", self.gen(e.key, out)
        else:
            c, k = self.seq((e.coll, e.key), out)
        if isinstance(ct, SeqT):
            c, k = self.atom(c, out), self.atom(k, out)
            self.raise_(out, f"not 0 <= {k} < len({c})",
                        f"{self.const(_seq_index_error, 'H')}({k}, {c}, "
                        f"{self.const(e.span, 'S')})")
            return f"{c}[{k}]"
        kt = ct.key if isinstance(ct, MapT) else ct.elem
        k = self.narrowed(k, e.key.type, kt, e.span, out)
        i = self.key(kt, k, out)
        coll = e.coll
        if isinstance(coll, ir.Local) and coll.slot in self.fixes:
            # The value of a fixpoint computed here, read by its step: record the entry.
            r, readers, key = self.fixes[coll.slot]
            i = self.atom(i, out)
            out.append(f"{readers}[{i}].append({key})")
            return f"{r}[{i}]"
        if isinstance(coll, ir.Local) and coll.slot + 1 in self.comp._recorded:
            # A fixpoint's value read by its step: the entry read is recorded (fixinc).
            p, i = self.atom(c, out), self.atom(i, out)
            out.append(f"{p}.seen.add({i})")
            return f"{p}.vals[{i}]"
        return f"{c}[{i}]"

    def binary(self, e: ir.Binary, out: list) -> str:
        op = e.op
        if op in ("and", "or"):
            a = self.gen(e.left, out)
            lines, b = self.sub(e.right)
            if not lines:
                return f"({a} {op} {b})"
            t = self.temp()
            out.append(f"{t} = {a}")
            self.nested(out, f"if {'' if op == 'and' else 'not '}{t}:",
                        lines + [f"{t} = {b}"])
            return t
        a, b = self.seq((e.left, e.right), out)
        if isinstance(e.left.type, BagT) and op in ("+", "-", "<="):
            helper = {"+": _bag_add, "-": _bag_sub, "<=": _bag_le}[op]
            return f"{self.const(helper, 'H')}({a}, {b})"
        match op:
            case "+" | "-" | "*" | "==" | "!=" | "<" | "<=" | ">" | ">=":
                return f"({a} {op} {b})"
            case "/" | "%":
                pyop = "//" if op == "/" else "%"
                r = e.right
                if not (isinstance(r, ir.Const) and type(r.value) is int and r.value != 0):
                    a, b = self.atom(a, out), self.atom(b, out)
                    self.raise_(out, f"{b} == 0",
                                f"{self.const(EvalError, 'H')}('division by zero', "
                                f"{self.const(e.span, 'S')})")
                return f"({a} {pyop} {b})"
        raise AssertionError(op)

    def builtin(self, e: ir.Builtin, out: list) -> str:
        name = e.name
        span = self.const(e.span, "S") if name in ("top", "bottom", "pop", "pop_bottom") \
            else None
        match name:
            case "len":
                return f"len({self.gen(e.args[0], out)})"
            case "top" | "bottom" | "pop" | "pop_bottom":
                s = self.atom(self.gen(e.args[0], out), out)
                self.raise_(out, f"not {s}", f"{self.const(EvalError, 'H')}("
                            f"{name + ' of an empty seq'!r}, {span})")
                return {"top": f"{s}[-1]", "bottom": f"{s}[0]", "pop": f"{s}[:-1]",
                        "pop_bottom": f"{s}[1:]"}[name]
            case "push":
                s, x = self.seq(e.args, out)
                return f"({s} + ({x},))"
            case "push_bottom":
                # The closure evaluates the element first.
                x, s = self.seq((e.args[1], e.args[0]), out)
                return f"(({x},) + {s})"
            case "size":
                return f"sum({self.gen(e.args[0], out)})"
            case "least" | "most":
                a, b = (self.atom(x, out) for x in self.seq(e.args, out))
                # min(a, b) and max(a, b), which keep a unless b is strictly better.
                if name == "least":
                    return f"({b} if {b} < {a} else {a})"
                return f"({b} if {b} > {a} else {a})"
            case "abs":
                return f"abs({self.gen(e.args[0], out)})"
            case "component" | "components":
                return self.external(self.comp._closure(e), e, out)
        raise AssertionError(name)

    def member(self, e: ir.Member, out: list) -> str:
        ct = e.coll.type
        coll = e.coll
        if isinstance(coll, ir.BagLit) and isinstance(ct, SetT):
            if all(isinstance(x, ir.Const) for x in coll.items):
                consts = frozenset(x.value for x in coll.items)
                return f"({self.gen(e.elem, out)} in {self.const(consts)})"
            xs = self.seq((e.elem,) + coll.items, out)
            return f"({xs[0]} in {{{', '.join(xs[1:])}}})"
        if isinstance(ct, SeqT):
            x, c = self.seq((e.elem, coll), out)
            return f"({x} in {c})"
        c, x = self.seq((coll, e.elem), out)
        x = self.narrowed(x, e.elem.type, ct.elem, e.span, out)
        k = self.key(ct.elem, x, out)
        if isinstance(ct, BagT):
            return f"({c}[{k}] > 0)"
        return f"{c}[{k}]"

    def baglit(self, t, items, out: list) -> str:
        et = t.elem
        n = finite(et).size
        is_set = isinstance(t, SetT)
        b = self.temp()
        out.append(f"{b} = [{'False' if is_set else '0'}] * {n}")
        for x in items:
            k = self.atom(self.key(et, self.gen(x, out), out), out)
            out.append(f"{b}[{k}] = True" if is_set else f"{b}[{k}] += 1")
        out.append(f"{b} = tuple({b})")
        return b
