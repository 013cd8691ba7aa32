"""The terms of a sum that a step leaves equal to their old versions whatever the values
(a count over a sequence an item of another value was pushed onto), found by seeded
assignments first and a small solver of its own context after, and put back as they were."""
from __future__ import annotations

import functools
import random

import z3
from z3.z3 import _to_expr_ref as _expr_ref

from ..engine.symbolic import run_check
from . import terms

# Each identity `same_terms` asks gets this long (ms); past this many it gives up on, one
# at a time, the rest of the terms are left as they are (no identity is assumed).
SAME_TERM_MS = 200
SAME_TERM_GIVE_UPS = 2
# Assignments `untold` tries before `same_terms` asks z3, and the integers it draws from.
SAME_TERM_TRIES = 8
SAME_TERM_INTS = (0, 1, 2)


def same_terms(old, new):
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
    candidates = untold(pairs)
    solver = same_solver() if candidates else None
    # The solver lives in a context of its own: in the prover's, which holds the whole step,
    # each check costs some 200 ms, and a sum whose terms differ on exclusive conditions
    # (the position a write goes to) takes a model per term.
    ported = [(x.translate(solver.ctx), y.translate(solver.ctx)) for x, y in candidates]
    same, rest = [], list(range(len(candidates)))
    while rest:
        solver.reset()
        solver.add(z3.Or([ported[i][0] != ported[i][1] for i in rest]))
        verdict = run_check(solver)
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
                answer = run_check(solver)
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
    return z3.substitute(new, *[(candidates[i][1], candidates[i][0]) for i in same])


def untold(pairs: list) -> list:
    """The pairs of terms that a few seeded assignments of their variables do not tell apart,
    each term evaluated by z3's simplifier (no solver): only those may be identities.  A pair
    that differs under one assignment is no identity, and asking the solver costs some 20 ms a
    query once the context holds a large step (a count over 64 squares after a move)."""
    consts, funs = terms.symbols(pairs)
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


@functools.cache
def same_solver():
    """The solver `same_terms` asks, made once (per process) in a z3 context of its own, and
    reset before each query: in the prover's context, once it holds a large step's terms, a
    new solver's first check costs some 20 ms and each check of a few small terms 200 ms."""
    s = z3.Solver(ctx=z3.Context())
    s.set("timeout", SAME_TERM_MS)
    return s

