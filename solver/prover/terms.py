"""The z3 terms and queries of the inductive step: substituting a path's successor into a
conjunct, splitting a formula into conjuncts, the variables a term reads, and asking a
solver under a scope and a time limit of its own."""
from __future__ import annotations

import contextlib

import z3
from z3.z3 import _to_expr_ref as _expr_ref

from ..engine import domains as dz
from ..engine.game import Game, Move
from ..engine.symbolic import check


def substitute(t, pairs):
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


def conjuncts(term) -> list:
    """The top-level conjuncts of a term (a `forall` over a finite domain gives one each);
    ``a or (b and c)`` gives ``a or b`` and ``a or c``, so that ``A implies forall x: P(x)``
    splits into one small conjunct per x."""
    if z3.is_and(term):
        out = []
        for c in term.children():
            out.extend(conjuncts(c))
        return out
    if z3.is_or(term):
        kids = term.children()
        for i, k in enumerate(kids):
            if z3.is_and(k):
                rest = kids[:i] + kids[i + 1:]
                out = []
                for c in conjuncts(k):
                    out.extend(conjuncts(z3.Or(*rest, c)))
                return out
    return [term]


def free_vars(term, memo: dict) -> frozenset:
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


def symbols(pairs: list) -> tuple[list, list]:
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


def substituted(v, term, val):
    """A value with every occurrence of ``term`` in its leaves replaced by ``val`` (and each
    leaf simplified: a leaf that becomes a constant is a Python value again)."""
    if isinstance(v, dz.SymSeq):
        return dz.SymSeq(substituted(v.length, term, val),
                         tuple(substituted(x, term, val) for x in v.slots))
    if isinstance(v, tuple):
        return tuple(substituted(x, term, val) for x in v)
    if not dz.is_sym(v):
        return v
    r = z3.simplify(z3.substitute(v, (term, val)))
    if z3.is_int_value(r):
        return r.as_long()
    if z3.is_true(r) or z3.is_false(r):
        return z3.is_true(r)
    return r


@contextlib.contextmanager
def time_limit(solver, ms: int, back: int):
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


def unsat(solver, goal) -> bool:
    """Whether ``goal`` is unsatisfiable under the solver's assertions (a model is not
    fetched: for a large formula that costs as much as a quick check)."""
    with _assuming(solver, goal):
        return not check(solver)


def check_assume(solver, goal):
    """Check ``goal`` under the solver's assertions; return None when unsat, else a model
    (read before the scope is popped, after which z3 no longer has it)."""
    with _assuming(solver, goal):
        return solver.model() if check(solver) else None


def describe_cti(game: Game, b, model, S) -> str:
    a = game.action(b.action)
    params = tuple(dz.concretize(p.domain.elem, v, model) for p, v in zip(a.ir.params, b.params))
    return f"a state satisfying the invariants where {Move(b.action, params).label(game)} breaks it"

