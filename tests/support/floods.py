"""Boards of the flood fixture (tests/fixtures/flood.rules) and their oracles: a state from
heights, the connected built squares by plain graph search, the Z3 terms checked against the
interpreter board by board, and the declarations a term uses."""
from __future__ import annotations

import z3

from solver.engine import domains as dz
from solver.lang.types import finite


def square_type(g):
    return g.p.types["Sq"]


def state(g, heights: dict, pieces: dict | None = None):
    """A state from {(x, y): height}."""
    sqs = finite(square_type(g)).values
    fi = g.field_index
    S = list(g.initial())
    S[fi["height"]] = tuple(heights.get(s, 0) for s in sqs)
    S[fi["piece"]] = tuple((pieces or {}).get(s, 0) for s in sqs)
    return tuple(S)


def components(heights: dict, s):
    """The connected built squares around s, by a plain graph search (the oracle)."""
    if heights.get(s, 0) == 0:
        return set()
    seen, todo = {s}, [s]
    while todo:
        x, y = todo.pop()
        for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if heights.get(n, 0) > 0 and n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def symbolic_agrees(g, text, heights_list):
    """The Z3 terms of ``text`` over a fresh state equal the interpreter on each board.  The
    terms are built once, for every square, and packed into one term, so that each board is
    one substitution of their shared DAG."""
    square = square_type(g)
    fresh = dz.Fresh("f_")
    Z = fresh.value(g.state_type, "z")
    fs = g.expr(text, {"s": square}, symbolic=True)[0]
    fc = g.expr(text, {"s": square})[0]
    zh = Z[g.field_index["height"]]
    squares = list(finite(square).values)
    terms = []
    for s in squares:
        got = fs(Z, s)
        terms.append([dz.lift(t) for t in (got if isinstance(got, tuple) else (got,))])
    flat = [t for ts in terms for t in ts]
    # Each term as an integer, so that one uninterpreted function packs them all.
    ints = [z3.If(t, z3.IntVal(1), z3.IntVal(0)) if z3.is_bool(t) else t for t in flat]
    pack = z3.Function("pack", *([z3.IntSort()] * len(ints)), z3.BoolSort())(*ints)
    for heights in heights_list:
        S = state(g, heights)
        pairs = [(v, z3.IntVal(n)) for v, n in zip(zh, S[g.field_index["height"]])]
        values = iter(z3.simplify(z3.substitute(pack, *pairs)).children())
        for s, ts in zip(squares, terms):
            want = fc(S, s)
            flat_w = want if isinstance(want, tuple) else (want,)
            for w, t in zip(flat_w, ts):
                v = next(values)
                v = v.as_long() == 1 if z3.is_bool(t) else v.as_long()
                assert v == w, f"{text} at {s} on {heights}"


def decls(t):
    """The declarations a term uses, each shared subterm visited once (a flood's terms are
    DAGs whose trees are exponentially larger)."""
    out, seen, todo = set(), set(), [t]
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.is_app(x):
            out.add(x.decl())
            todo += list(x.children())
    return out
