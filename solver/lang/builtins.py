"""The builtin functions of the rules language (`len`, `push`, `size`, `old`, `component`...):
each checks its arguments and gives the typed `ir.Builtin`; ``ck`` is the `check.Checker`."""
from __future__ import annotations

from . import ir
from .scope import Scope
from .types import BagT, IntT, SeqT, SetT, finite, is_grid_region


def _b_seq_arg(ck, t, args_t, sc, n: int, name: str):
    if len(args_t) != n:
        raise ck.err(t, f"{name} takes {n} argument(s), given {len(args_t)}")
    s = ck.expr(args_t[0], sc)
    if not isinstance(s.type, SeqT):
        raise ck.err(args_t[0], f"{name} needs a seq, not {s.type}")
    return s


def _b_len(ck, t, args_t, sc, want):
    s = _b_seq_arg(ck, t, args_t, sc, 1, "len")
    return ir.Builtin(IntT(0, s.type.cap), ck.span(t), "len", (s,))


def _b_elem(name):
    def f(ck, t, args_t, sc, want):
        s = _b_seq_arg(ck, t, args_t, sc, 1, name)
        return ir.Builtin(s.type.elem, ck.span(t), name, (s,))
    return f


def _b_push(name):
    def f(ck, t, args_t, sc, want):
        s = _b_seq_arg(ck, t, args_t, sc, 2, name)
        x = ck.coerce(ck.expr(args_t[1], sc, s.type.elem), s.type.elem, args_t[1])
        # One longer than its argument: storing it back checks the capacity (`bounds`).
        return ir.Builtin(SeqT(s.type.elem, s.type.cap + 1), ck.span(t), name, (s, x))
    return f


def _b_pop(name):
    def f(ck, t, args_t, sc, want):
        s = _b_seq_arg(ck, t, args_t, sc, 1, name)
        return ir.Builtin(s.type, ck.span(t), name, (s,))
    return f


def _b_size(ck, t, args_t, sc, want):
    if len(args_t) != 1:
        raise ck.err(t, "size takes one bag or set")
    b = ck.expr(args_t[0], sc)
    if isinstance(b.type, BagT):
        return ir.Builtin(IntT(0, b.type.most * finite(b.type.elem).size), ck.span(t), "size",
                          (b,))
    if isinstance(b.type, SetT):
        return ir.Builtin(IntT(0, finite(b.type.elem).size), ck.span(t), "size", (b,))
    raise ck.err(args_t[0], f"size needs a bag or set, not {b.type}")


def _b_old(ck, t, args_t, sc, want):
    if not sc.transition:
        raise ck.err(t, "`old(...)` is only meaningful in a `transition` property")
    if len(args_t) != 1:
        raise ck.err(t, "old takes one expression")
    inner = Scope(sc.names, sc.frame, True, False, sc.allow_state)
    return ck.expr(args_t[0], inner, want)


def _b_minmax(name):
    def f(ck, t, args_t, sc, want):
        if len(args_t) != 2:
            raise ck.err(t, f"{name} takes two numbers")
        a, b = ck.int_expr(args_t[0], sc), ck.int_expr(args_t[1], sc)
        x, y = a.type, b.type
        typ = IntT(min(x.lo, y.lo), min(x.hi, y.hi)) if name == "least" else \
            IntT(max(x.lo, y.lo), max(x.hi, y.hi))
        return ir.Builtin(typ, ck.span(t), name, (a, b))
    return f


def _b_abs(ck, t, args_t, sc, want):
    if len(args_t) != 1:
        raise ck.err(t, "abs takes one number")
    a = ck.int_expr(args_t[0], sc)
    m = max(abs(a.type.lo), abs(a.type.hi))
    lo = 0 if a.type.lo <= 0 <= a.type.hi else min(abs(a.type.lo), abs(a.type.hi))
    return ir.Builtin(IntT(lo, m), ck.span(t), "abs", (a,))


def _b_grid_region(ck, t, sc, name):
    ok = ck.expr(t, sc)
    if not is_grid_region(ok.type):
        raise ck.err(t, f"{name} needs a map from grid squares (a record of two integer fields) "
                        f"to bool, not {ok.type}")
    return ok


def _b_component(ck, t, args_t, sc, want):
    if len(args_t) != 2:
        raise ck.err(t, "component takes a square and a region: component(seed, ok)")
    ok = _b_grid_region(ck, args_t[1], sc, "component")
    seed = ck.expr(args_t[0], sc)
    if seed.type != ok.type.key:
        raise ck.err(args_t[0], f"component's seed must be a {ok.type.key}, not {seed.type}")
    return ir.Builtin(ok.type, ck.span(t), "component", (seed, ok))


def _b_components(ck, t, args_t, sc, want):
    if len(args_t) != 1:
        raise ck.err(t, "components takes one region: components(ok)")
    ok = _b_grid_region(ck, args_t[0], sc, "components")
    return ir.Builtin(IntT(0, finite(ok.type.key).size), ck.span(t), "components", (ok,))


def _b_subbags(ck, t, args_t, sc, want):
    raise ck.err(t, "`subbags(...)` is only a domain of `choose`")


BUILTINS = {
    "len": _b_len,
    "top": _b_elem("top"),
    "bottom": _b_elem("bottom"),
    "push": _b_push("push"),
    "push_bottom": _b_push("push_bottom"),
    "pop": _b_pop("pop"),
    "pop_bottom": _b_pop("pop_bottom"),
    "size": _b_size,
    "old": _b_old,
    "least": _b_minmax("least"),
    "most": _b_minmax("most"),
    "abs": _b_abs,
    "component": _b_component,
    "components": _b_components,
    "subbags": _b_subbags,
}
