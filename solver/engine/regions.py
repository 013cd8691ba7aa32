"""Connected regions of a grid: the language's `component(seed, ok)` and `components(ok)`.

A grid square is a record of two integer fields; two squares are neighbours when they differ
by one in one field and agree on the other (they share a side).  ``ok`` is a map from squares
to bool.  `component(seed, ok)` is the set (as such a map) of the squares of ``ok`` connected
to ``seed`` by neighbour steps within ``ok`` (empty when ``seed`` is not in ``ok``);
`components(ok)` is the number of such sets.

Concretely: a search.  Symbolically: the same least fixpoint a flood written with `fix`
unrolls (each step adds the squares of ``ok`` beside the set), stopped when a step changes
nothing; the number of components counts the squares of ``ok`` that come first in their own
component.  Being primitives, the prover may know facts of them that a `fix` does not say
(bench/region_lemmas.py)."""
from __future__ import annotations

import z3

from . import domains as dz
from .values import identical, simplified
from .abstraction import Abstraction
from ..lang.types import RecordT, finite


_NEIGHBOURS: dict = {}


def neighbours(t: RecordT) -> tuple[tuple[int, ...], ...]:
    """For each square of ``t`` (by ordinal), the ordinals of the squares beside it."""
    nb = _NEIGHBOURS.get(t)
    if nb is None:
        fin = finite(t)
        nb = _NEIGHBOURS[t] = tuple(
            tuple(fin.index[w] for w in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))
                  if w in fin.index)
            for x, y in fin.values)
    return nb


def _search(nb, ok, start: int, label: list, k: int) -> None:
    label[start] = k
    todo = [start]
    while todo:
        u = todo.pop()
        for v in nb[u]:
            if ok[v] and label[v] < 0:
                label[v] = k
                todo.append(v)


def component_of(t: RecordT, seed, ok: tuple) -> tuple:
    """`component(seed, ok)` on concrete values."""
    i = finite(t).index[seed]
    if not ok[i]:
        return (False,) * len(ok)
    label = [-1] * len(ok)
    _search(neighbours(t), ok, i, label, 0)
    return tuple(x == 0 for x in label)


def labels(nb, ok) -> list[int]:
    """Each square's component number, 0, 1, ... in order of first squares (-1 outside
    ``ok``), on any graph: ``nb[i]`` the neighbours of square i."""
    label, k = [-1] * len(ok), 0
    for i, b in enumerate(ok):
        if b and label[i] < 0:
            _search(nb, ok, i, label, k)
            k += 1
    return label


def count_of(t: RecordT, ok: tuple) -> int:
    """`components(ok)` on concrete values."""
    return max(labels(neighbours(t), ok), default=-1) + 1


# At most this many unrolled components a `Unrolled` keeps (then it starts afresh).
UNROLLED_MAX = 4096


class Unrolled:
    """The components a symbolic evaluator unrolled, by their seed and squares: a step's
    paths ask the same ones many times (one case of a 3x3 board: 1,602 floods, 810 distinct),
    each some nine rounds of terms simplified.  An entry keeps its terms, so that their z3
    ids are not reused while it stands."""

    def __init__(self):
        self.memo: dict = {}

    def get(self, t: RecordT, seed, ok: tuple, abstraction):
        hit = self.memo.get(self._key(t, seed, ok))
        if hit is None or hit[2] is not abstraction or not identical(hit[0], seed) \
                or not identical(hit[1], ok):
            return None
        return hit[3]

    def put(self, t: RecordT, seed, ok: tuple, abstraction, r: tuple) -> None:
        if len(self.memo) >= UNROLLED_MAX:
            self.memo.clear()
        self.memo[self._key(t, seed, ok)] = (seed, ok, abstraction, r)

    @staticmethod
    def _key(t: RecordT, seed, ok: tuple) -> tuple:
        return (t, *(x.get_id() if dz.is_sym(x) else x for x in (seed, *ok)))


def component(t: RecordT, seed, ok: tuple, abstraction: Abstraction,
              unrolled: Unrolled | None = None) -> tuple:
    """`component(seed, ok)`, concrete or symbolic (the region's unknowns when
    ``abstraction`` has them; else unrolled, stopped as a `fix` is, and kept in
    ``unrolled``)."""
    seed_concrete = dz.is_concrete(seed)
    if seed_concrete and dz.is_concrete(ok):
        return component_of(t, seed, tuple(bool(b) for b in ok))
    nb = neighbours(t)
    r = abstraction.region(ok, nb)
    if r is not None:
        if seed_concrete:
            return r.component(finite(t).index[seed])
        o = dz.ordinal(t, seed)
        return tuple(z3.Or([z3.And(o == i, dz.lift(r.same(i, j))) for i in range(len(ok))])
                     for j in range(len(ok)))
    if unrolled is not None:
        hit = unrolled.get(t, seed, ok, abstraction)
        if hit is not None:
            return hit
        r = component(t, seed, ok, abstraction)
        unrolled.put(t, seed, ok, abstraction, r)
        return r
    if seed_concrete:
        i = finite(t).index[seed]
        r = tuple(ok[j] if j == i else False for j in range(len(ok)))
    else:
        o = dz.ordinal(t, seed)
        r = tuple(dz.all_((o == j, ok[j])) for j in range(len(ok)))
    r = simplified(r)
    for _ in range(len(ok)):
        nxt = simplified(tuple(
            dz.any_((r[j], dz.all_((ok[j], dz.any_(r[v] for v in nb[j])))))
            for j in range(len(ok))))
        if identical(nxt, r):
            break
        r = nxt
    return r


def components(t: RecordT, ok: tuple, abstraction: Abstraction,
               unrolled: Unrolled | None = None):
    """`components(ok)`, concrete or symbolic (the components unrolled kept in
    ``unrolled``)."""
    if dz.is_concrete(ok):
        return count_of(t, tuple(bool(b) for b in ok))
    r = abstraction.region(ok, neighbours(t))
    if r is not None:
        return r.count
    known, terms = 0, []
    for i, v in enumerate(finite(t).values):
        if ok[i] is False:
            continue
        c = component(t, v, ok, abstraction, unrolled)
        first = dz.all_((ok[i], *[dz.not_(c[j]) for j in range(i)]))
        if first is True:
            known += 1
        elif first is not False:
            terms.append(z3.If(first, 1, 0))
    return known + z3.Sum(terms) if terms else known

