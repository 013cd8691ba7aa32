"""An action's leading checks compiled for the interpreter: the `field == constant` tests
that close it in a state (its gates), the constant ones decided once, and the rest as one
boolean function, its leading requires asked in the order learned to be cheapest (`Order`)."""
from __future__ import annotations

from time import perf_counter_ns

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
    """Compile requires/lets to ``f(st, env) -> bool``.  An evaluation error is raised as the
    requires in their written order would raise it (its callers say what it means), but for
    one on a candidate that another requires refuses, once another order is learned (`Order`)."""
    if not stmts:
        return None
    # The leading requires are one `and` of their conditions, compiled as one expression: one
    # generated function asks them, not a call per check.  Two or more are asked in the order
    # that refuses soonest for least (`Order`).
    k = 0
    while k < len(stmts) and isinstance(stmts[k], ir.Requires):
        k += 1
    tail = [(0, cc.expr(s.cond)) if isinstance(s, ir.Requires) else (s.slot + 1, cc.expr(s.value))
            for s in stmts[k:]]
    if k >= 2:
        return Order(cc, [s.cond for s in stmts[:k]], tail).check
    return _function(("plain", cc.expr(stmts[0].cond)) if k else None, tail)


def _function(head, tail: list):
    """The check as one generated function: ``head`` asks the leading requires (None, or
    ``("plain", f)``, ``("guarded", f, written)``, ``("learning", order)``), then each step
    of ``tail``: ``(0, f)`` a requires, ``(slot, f)`` a let."""
    lines, scope = [], {}
    if head is not None:
        if head[0] == "plain":
            scope["h"] = head[1]
            lines.append("    if not h(st, env):\n        return False")
        elif head[0] == "guarded":
            scope.update(h=head[1], G=head[2], E=EvalError)
            lines.append(_GUARDED)
        else:
            order = head[1]
            scope.update(F=order.state, G=order.original, L=order.learn, E=EvalError)
            lines.append(_LEARNING)
    for j, (slot, f) in enumerate(tail):
        scope[f"f{j}"] = f
        lines.append(f"    env[{slot}] = f{j}(st, env)" if slot else
                     f"    if not f{j}(st, env):\n        return False")
    src = "def check(st, env, {}):\n{}\n    return True\n".format(
        ", ".join(f"{x}={x}" for x in scope), "\n".join(lines))
    exec(src, {}, scope)
    return scope["check"]


# The leading requires in an order other than the written one (h): an evaluation error there
# is not trusted, and the written order (G) answers, raising the error it meets, if any.
_GUARDED = """\
    try:
        ok = h(st, env)
    except E:
        ok = G(st, env)
    if not ok:
        return False"""

# While `Order` learns: the order chosen so far (F[0]) for F[1] evaluations, then the next
# window (L answers meanwhile).
_LEARNING = """\
    c = F[1]
    if c:
        F[1] = c - 1
        try:
            ok = F[0](st, env)
        except E:
            if F[0] is G:
                raise
            ok = G(st, env)
    else:
        ok = L(st, env)
    if not ok:
        return False"""

# How `Order` learns: windows of LEARN evaluations, each after the number of evaluations
# given here (the first after the start, when the first calls compile what they call); a new
# order is taken when it would have cost under MARGIN of the current one on the window's
# candidates, and at least GAIN_NS less an evaluation.
LEARN = 64
WINDOWS = (1 << 8, 1 << 12)
MARGIN = 0.75
GAIN_NS = 200


class Order:
    """The order in which a guard's leading requires are asked.  All of them must hold, and
    they have no effects, so any order gives the same verdict, unless one raises an error
    that an earlier one would have spared (a bound checked before the index it guards): the
    written order then answers, as it would have.  Which order is cheap depends on the
    candidates a game meets, not on the text: over a large space of positions, a check that
    a piece touches something may refuse nearly every candidate while a check written before
    it, that the cells are free, refuses almost none.

    So the order is learned, in a few windows of LEARN evaluations: each requires is timed
    alone on every candidate of the window (less the time of timing nothing), and the
    verdicts kept; then the requires are put, one after another, in the order of least time
    per refusal over the candidates the ones before let through (so that checks that refuse
    the same candidates are not counted twice), the written order breaking ties.  After the
    last window the check (`check`, the function its callers hold) is generated again with
    the order written in, so that it costs what a written order does.  A window in which any
    requires raised an error keeps the written order for good.

    One difference remains: once another order is taken, a requires that would raise an
    error (a fault of the spec) on a candidate that a later one refuses is not reached, and
    the candidate is refused rather than the error raised.  An error that the written order
    meets before any refusal is raised as before."""

    __slots__ = ("cc", "conds", "tail", "fns", "original", "state", "order", "rows", "windows",
                 "check")

    def __init__(self, cc: Compiler, conds: list, tail: list):
        self.cc, self.conds, self.tail = cc, conds, tail
        self.original = cc.expr(_conj(conds))
        self.order = tuple(range(len(conds)))
        self.windows = list(WINDOWS)
        self.state = [self.original, self.windows.pop(0)]
        self.fns = None
        self.rows: list = []
        self.check = _function(("learning", self), tail)
        self.check.order = self                 # what was learned, for the tests

    def learn(self, st, env) -> bool:
        """One evaluation of a window: each requires timed alone, the verdict of the written
        order returned (its error raised)."""
        if self.fns is None:
            self.fns = [self.cc.expr(c) for c in self.conds]
        row, err = [], None
        t0 = perf_counter_ns()
        _nothing(st, env)
        idle = perf_counter_ns() - t0
        for f in self.fns:
            t0 = perf_counter_ns()
            try:
                v = bool(f(st, env))
            except EvalError as e:
                v, err = None, err or e
            row.append((max(0, perf_counter_ns() - t0 - idle), v))
        self.rows.append(row)
        if err is not None:
            self.order, self.windows, self.rows = tuple(range(len(self.conds))), [], []
            self.state[0] = self.original
            self._settle(())
        elif len(self.rows) >= LEARN:
            rows, self.rows = self.rows, []
            self._settle(rows)
        for _, v in row:
            if v is None:
                raise err
            if not v:
                return False
        return True

    def _settle(self, rows) -> None:
        """The order after a window (its ``rows``: (time, verdict) of each requires on each
        candidate), kept until the next window or, after the last, written in."""
        before = self.order
        if rows:
            # Each requires' median time: the first calls of a window compile what they call.
            n = len(self.conds)
            times = [sorted(r[j][0] for r in rows)[len(rows) // 2] for j in range(n)]
            refused = [[not v for _, v in r] for r in rows]
            order = _greedy(refused, times)
            new, now = _cost(refused, times, order), _cost(refused, times, self.order)
            if order != self.order and new < MARGIN * now and now - new >= GAIN_NS * len(rows):
                self.order = order
        written = self.order == tuple(range(len(self.conds)))
        # state[0] asks the requires in the order before this window.
        f = self.state[0] if self.order == before else self.original if written else \
            self.cc.expr(_conj([self.conds[j] for j in self.order]))
        if self.windows:
            self.state[:] = [f, self.windows.pop(0)]
            return
        final = _function(("plain", f) if written else ("guarded", f, self.original), self.tail)
        self.check.__code__ = final.__code__
        self.check.__defaults__ = final.__defaults__


def _nothing(st, env) -> bool:
    return True


def _greedy(refused: list, times: list) -> tuple:
    """The requires in the order of least time per refusal on the candidates still open
    (``refused[k][j]``: requires j refused candidate k)."""
    left, open_, order = list(range(len(times))), refused, []
    while left:
        def rank(j):
            n = sum(1 for r in open_ if r[j])
            return (0, times[j] * len(open_) / n, j) if n else (1, 0, j)
        j = min(left, key=rank)
        left.remove(j)
        order.append(j)
        open_ = [r for r in open_ if not r[j]]
    return tuple(order)


def _conj(conds: list) -> ir.Expr:
    e = conds[0]
    for c in conds[1:]:
        e = ir.Binary(e.type, e.span, "and", e, c)
    return e


def _cost(refused: list, times: list, order: tuple) -> int:
    """The time the requires in ``order`` would have taken on the window's candidates."""
    total = 0
    for r in refused:
        for j in order:
            total += times[j]
            if r[j]:
                break
    return total
