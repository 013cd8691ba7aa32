"""An action's leading checks compiled for the interpreter: the `field == constant` tests
that close it in a state (its gates), the constant ones decided once, and the rest as one
boolean function that answers without raising."""
from __future__ import annotations

from ..lang import ir
from ..lang.errors import EvalError
from ..lang.irwalk import nodes
from .evaluate import Compiler


def gate(e):
    """``(field index, value)`` when ``e`` is ``state_field == constant`` (either way round)."""
    if isinstance(e, ir.Binary) and e.op == "==":
        for f, c in ((e.left, e.right), (e.right, e.left)):
            if isinstance(f, ir.Field) and isinstance(f.record, ir.StateRef) \
                    and not f.record.old and isinstance(c, ir.Const) \
                    and isinstance(c.value, (int, bool)):
                return f.index, c.value
    return None


def conjunct_gates(e) -> list:
    """The gates among the top-level conjuncts of ``e``."""
    if isinstance(e, ir.Binary) and e.op == "and":
        return conjunct_gates(e.left) + conjunct_gates(e.right)
    g = gate(e)
    return [g] if g is not None else []


def split_gates(cc: Compiler, hoist: list, frame: int):
    """Split leading hoisted requires into state gates and constants: (gates, never, rest)."""
    gates = []
    k = 0
    for r in hoist:
        g = gate(r.cond)
        if g is not None:
            gates.append(g)
        elif not any(isinstance(n, (ir.StateRef, ir.Local)) for n in nodes(r.cond)):
            try:
                v = cc.expr(r.cond)(None, [None] * frame)
            except Exception:
                break
            if not v:
                return tuple(gates), True, ()
        else:
            break
        k += 1
    return tuple(gates), False, tuple(hoist[k:])


def passes(checks, st, env) -> bool:
    for f in checks:
        try:
            if not f(st, env):
                return False
        except EvalError:
            return True
    return True


def bool_check(cc: Compiler, stmts):
    """Compile requires/lets to ``f(st, env) -> bool`` (no exceptions on the hot path)."""
    if not stmts:
        return None
    # The leading requires are one `and` of their conditions, compiled as one expression: one
    # generated function asks them in their order, not a call per check.
    k = 0
    while k < len(stmts) and isinstance(stmts[k], ir.Requires):
        k += 1
    steps = []
    if k:
        cond = stmts[0].cond
        for s in stmts[1:k]:
            cond = ir.Binary(cond.type, cond.span, "and", cond, s.cond)
        steps.append((0, cc.expr(cond)))
    for s in stmts[k:]:
        if isinstance(s, ir.Requires):
            steps.append((0, cc.expr(s.cond)))
        else:
            steps.append((s.slot + 1, cc.expr(s.value)))
    # Written out as one function: no loop over the steps.
    lines, names = [], []
    for j, (slot, _) in enumerate(steps):
        names.append(f"f{j}")
        lines.append(f"    env[{slot}] = f{j}(st, env)" if slot else
                     f"    if not f{j}(st, env):\n        return False")
    src = "def check(st, env, {}):\n{}\n    return True\n".format(
        ", ".join(f"{x}={x}" for x in names), "\n".join(lines))
    scope = {x: f for x, (_, f) in zip(names, steps)}
    exec(src, {}, scope)
    return scope["check"]
