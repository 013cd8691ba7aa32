"""Would the two flood properties of Torres be provable on 8 x 8 if the language knew what a
connected region is?  The experiment that designed `rulebook prove --region-facts` (docs/prover.md,
Torres invariants), not part of `make bench`; the facts are now the prover's
(solver/prover/regionfacts.py), read from there.

The idea: the prover reads each castle (the component of a square in a set of squares), its
area and the number of castles as unknowns and adds facts that hold of every grid's
components (`Lemmas`, here with each size an unknown of its own and each component's
tallest column): a component holds its seed and
nothing outside the set, is an equivalence class, and all squares of one class have one area;
when the set gains one square q, the number of components goes up by 1 - k (k: the distinct
components beside q), nothing is split and no area shrinks; when it loses q, the components
that did not hold q are kept, a square that was with q is now with a neighbour of q, and the
number goes down by 1 - k' (k': the distinct components beside q afterwards), the areas of
the components beside q adding up to the area of q's, less q (and the same when q is added,
the other way round); the tallest
column of a component is no lower than any of its columns.  Only instances that name the
changed square's neighbours are added (the seeds: every square), so a step stays local.

    check   every fact, on concrete sets: all 512 sets of a 3 x 3 board and every q, then
            random sets of an 8 x 8 board; components by a graph search.  Evidence
            that the facts are true (they are also easy to prove on paper), not a proof.
    step    the inductive steps on a w x w board, from these facts alone: `place` on s keeps
            `height_within_area` and `castles_never_merge`; the card that moves a block from
            a to c keeps `height_within_area` (its guards as in spec/torres.rules, pieces
            left out; the card's use already satisfies `castles_never_merge`).

    python bench/region_lemmas.py check [--sets 300]
    python bench/region_lemmas.py step --width 8 [--paths 64] [--only place] [--timeout 300]

Measured on the 2-core machine (z3 of `make install`, 2026-12-02), CPU time: check, 3 x 3
all 512 sets (4,608 checks) 222 s, 8 x 8 20 random sets (1,280 checks) 418 s, every fact
holding; step on 8 x 8, `place` on each of the 64 squares proved, castles_never_merge 0.06 s
median (0.09 s at most), height_within_area 0.15 s (0.24 s); the card, 12 random (a, c)
proved, 4.45 s median, 10.55 s at most (one path: 0.35 s on 5 x 5, 1.0 s on 6 x 6, 4.0 s on
7 x 7, 11.4 s on 8 x 8); on 4 x 4 0.02 s and 0.09 s.  Without the facts about sizes (the
areas beside q adding up to q's), the card's step is refuted: a castle's area after the
block leaves is otherwise unknown.  z3's default solver does as well on
these queries (measured on two paths).
"""
from __future__ import annotations

import argparse
import itertools
import random
import time

import z3

from solver.prover import regionfacts
from solver.engine.regions import labels


def board(w: int) -> list[list[int]]:
    """The squares' side neighbours on a w x w board, by index y * w + x."""
    return [[(y + dy) * w + x + dx for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
             if 0 <= x + dx < w and 0 <= y + dy < w]
            for y in range(w) for x in range(w)]


class Region:
    """One set of squares (``ok``, z3 Bools) of a grid (``nb``) and its unknowns, plain z3
    constants here: same(a, b) (b lies in a's component), size(a) (the area of a's
    component), count (the number of components), tallest[a] (the tallest column of a's
    component, for given heights).  The shape solver/prover/regionfacts.py's facts read."""

    def __init__(self, tag: str, ok: list, height: list | None = None, nb=None):
        self.tag, self.ok, self.height, self.nb = tag, ok, height, nb
        self._same: dict = {}
        self._size = [z3.Int(f"{tag}.size{a}") for a in range(len(ok))]
        self.tallest = [z3.Int(f"{tag}.top{a}") for a in range(len(ok))]
        self.count = z3.Int(f"{tag}.count")
        self.rows: dict = {}        # the square each fact is about (regionfacts' `_row`)

    def size(self, a: int):
        return self._size[a]

    def same(self, a: int, b: int):
        if a == b:
            return self.ok[a]
        key = (min(a, b), max(a, b))            # symmetry, by construction
        if key not in self._same:
            self._same[key] = z3.Bool(f"{self.tag}.same{key[0]}_{key[1]}")
        return self._same[key]


class Lemmas:
    """The facts of solver/prover/regionfacts.py (the prover's), around the changed square q, with
    sizes as unknowns of their own (the prover also links each to the count of its
    component's squares) and each component's tallest column."""

    def __init__(self, nb: list[list[int]]):
        self.nb, self.n = nb, len(nb)

    def basic(self, r: Region, around: list[int]) -> list:
        r.nb = self.nb
        out = [z3.If(r.ok[t], r.size(t) >= 1, r.size(t) == 0) for t in range(self.n)]
        out += regionfacts.classes(r, around)
        if r.height is not None:
            for t in range(self.n):
                out.append(z3.Implies(r.ok[t], r.height[t] <= r.tallest[t]))
                out += [z3.Implies(r.same(t, d), r.height[t] <= r.tallest[d])
                        for d in around if d != t]
        return out

    def unchanged(self, r: Region, r2: Region, around: list[int]) -> list:
        return regionfacts.unchanged(r, r2, around)

    def add(self, r: Region, r2: Region, q: int, around: list[int]) -> list:
        """r2 is r with q added (q not in r); ``around``: the squares whose classes are
        compared (q's neighbours, and those of the step's other squares)."""
        r.nb = r2.nb = self.nb
        return regionfacts.added(r, r2, q, around)

    def remove(self, r: Region, r2: Region, q: int, around: list[int]) -> list:
        """r2 is r with q taken out (q in r)."""
        r.nb = r2.nb = self.nb
        return regionfacts.removed(r, r2, q, around)


# ---- check: the facts on concrete sets ------------------------------------------------------

def _concrete(r: Region, nb, height) -> list:
    """The values of r's unknowns, as z3 equations, from a search of its set."""
    ok = [z3.is_true(z3.simplify(b)) for b in r.ok]
    label = labels(nb, ok)
    size = [label.count(label[a]) if label[a] >= 0 else 0 for a in range(len(nb))]
    top = [max((height[b] for b in range(len(nb)) if label[b] == label[a]), default=0)
           if label[a] >= 0 else 0 for a in range(len(nb))]
    out = [r.count == len({x for x in label if x >= 0})]
    out += [r.size(a) == size[a] for a in range(len(nb))]
    out += [r.tallest[a] == top[a] for a in range(len(nb))]
    out += [v == (label[a] >= 0 and label[a] == label[b]) for (a, b), v in r._same.items()]
    return out


def check_sets(nb, sets, rng) -> int:
    """Check every fact on each set and each square q; returns the number of checks."""
    lem, n, done = Lemmas(nb), len(nb), 0
    for ok in sets:
        height = [rng.randint(1, 3) if b else 0 for b in ok]
        for q in range(n):
            has = [z3.BoolVal(b) for b in ok]
            other = [z3.BoolVal(b if a != q else not ok[q]) for a, b in enumerate(ok)]
            r, r2 = Region("r", has, [z3.IntVal(h) for h in height]), Region("s", other)
            around = nb[q] + [q]
            facts = lem.basic(r, around) + lem.basic(r2, around)
            facts += (lem.remove if ok[q] else lem.add)(r, r2, q, around)
            s = z3.Solver()
            s.add(_concrete(r, nb, height) + _concrete(r2, nb, height))
            s.add(z3.Not(z3.And(facts)))
            if s.check() != z3.unsat:
                raise AssertionError(f"a fact fails: set {ok}, q {q}")
            done += 1
    return done


# ---- step: the inductive steps from the facts alone ---------------------------------------

def place_step(nb, s: int, timeout: int, without: tuple = ()) -> dict:
    """Each property's verdict and CPU time; ``without``: guards left out (by their names in
    the spec), to see the step fail."""
    n, lem = len(nb), Lemmas(nb)
    h = [z3.Int(f"h{i}") for i in range(n)]
    h1 = [x + 1 if i == s else x for i, x in enumerate(h)]
    r0 = Region("r0", [x > 0 for x in h])
    r1 = Region("r1", [z3.BoolVal(True) if i == s else x > 0 for i, x in enumerate(h)])
    around = nb[s] + [s]
    facts = [x >= 0 for x in h] + lem.basic(r0, around) + lem.basic(r1, around)
    facts.append(z3.If(r0.ok[s], z3.And(lem.unchanged(r0, r1, around)),
                       z3.And(lem.add(r0, r1, s, around))))
    facts += [z3.Implies(r0.ok[t], h[t] <= r0.size(t)) for t in range(n)]
    # place's guards: beside a castle or on one, no merge, not too tall.
    facts.append(z3.Or([r0.ok[s]] + [r0.ok[d] for d in nb[s]]))
    if "no_merge" not in without:
        facts += [z3.Not(z3.And(r0.ok[d], r0.ok[e], z3.Not(r0.same(d, e))))
                  for d in nb[s] for e in nb[s] if d != e]
    area_with = z3.If(r0.ok[s], r0.size(s),
                      1 + z3.Sum([z3.If(r0.ok[d], r0.size(d), 0) for d in nb[s]]))
    facts.append(h[s] + 1 <= area_with)
    goals = {"height_within_area": z3.Or([z3.And(r1.ok[t], h1[t] > r1.size(t))
                                          for t in range(n)]),
             "castles_never_merge": r1.count < r0.count}
    return {k: _decide(facts, g, timeout) for k, g in goals.items()}


def relocate_step(nb, a: int, c: int, timeout: int, without: tuple = ()) -> dict:
    """As `place_step`, for the card that moves the block on a to c."""
    n, lem = len(nb), Lemmas(nb)
    h = [z3.Int(f"h{i}") for i in range(n)]
    h1 = [x - 1 if i == a else x for i, x in enumerate(h)]
    h2 = [x + 1 if i == c else x for i, x in enumerate(h1)]
    r0 = Region("r0", [x > 0 for x in h])
    r1 = Region("r1", [x > 0 for x in h1])
    r2 = Region("r2", [z3.BoolVal(True) if i == c else x > 0 for i, x in enumerate(h1)], h2)
    near_a, near_c = nb[a] + [a], nb[c] + [c]
    around = sorted(set(near_a + near_c))
    facts = [x >= 0 for x in h] + [h[a] > 0]
    facts += lem.basic(r0, around) + lem.basic(r1, around) + lem.basic(r2, around)
    facts.append(z3.If(h[a] > 1, z3.And(lem.unchanged(r0, r1, around)),
                       z3.And(lem.remove(r0, r1, a, around))))
    facts.append(z3.If(r1.ok[c], z3.And(lem.unchanged(r1, r2, around)),
                       z3.And(lem.add(r1, r2, c, around))))
    facts += [z3.Implies(r0.ok[t], h[t] <= r0.size(t)) for t in range(n)]
    # The card's guards: the castle stays whole, a one-block castle alone may join others,
    # not too tall where the block goes, nor where it was taken.
    facts += [z3.Or(h[a] > 1, z3.Not(z3.And(r1.ok[d], r1.ok[e], z3.Not(r1.same(d, e)))))
              for d in nb[a] for e in nb[a] if d != e]
    single = z3.And(r0.size(a) == 1, h[a] == 1)
    facts += [z3.Or(single, z3.Not(z3.And(r1.ok[d], r1.ok[e], z3.Not(r1.same(d, e)))))
              for d in nb[c] for e in nb[c] if d != e]
    facts.append(h2[c] <= r2.size(c))
    if "source_not_too_tall" not in without:
        facts.append(z3.Or(h1[a] > 0, z3.And([z3.Implies(r2.ok[d], r2.tallest[d] <= r2.size(d))
                                              for d in nb[a]])))
    goals = {"height_within_area": z3.Or([z3.And(r2.ok[t], h2[t] > r2.size(t))
                                          for t in range(n)])}
    return {k: _decide(facts, g, timeout) for k, g in goals.items()}


def _decide(facts, goal, timeout: int) -> tuple[str, float]:
    s = z3.Tactic("smt").solver()
    s.set("timeout", timeout * 1000)
    s.add(facts + [goal])
    began = time.process_time()
    v = s.check()
    return ("proved" if v == z3.unsat else "unknown" if v == z3.unknown else "refuted",
            time.process_time() - began)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("check", "step"))
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--paths", type=int, default=64, help="step: paths of each action, drawn")
    ap.add_argument("--sets", type=int, default=300, help="check: random 8 x 8 sets")
    ap.add_argument("--only", choices=("place", "relocate"), help="step: one action only")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=300, help="step: seconds per query")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.what == "check":
        small = [list(bits) for bits in itertools.product((False, True), repeat=9)]
        began = time.process_time()
        k = check_sets(board(3), small, rng)
        print(f"3x3: every fact holds on all {len(small)} sets ({k} checks, "
              f"{time.process_time() - began:.0f} s)", flush=True)
        big = [[rng.random() < p for _ in range(64)]
               for p in (rng.choice((0.3, 0.5, 0.7)) for _ in range(args.sets))]
        began = time.process_time()
        k = check_sets(board(8), big, rng)
        print(f"8x8: every fact holds on {len(big)} random sets ({k} checks, "
              f"{time.process_time() - began:.0f} s)")
        return
    nb, n = board(args.width), args.width ** 2
    squares = rng.sample(range(n), min(args.paths, n))
    pairs = [tuple(rng.sample(range(n), 2)) for _ in range(args.paths)]
    for name, runs in (("place", [(place_step, (s,)) for s in squares]),
                       ("relocate", [(relocate_step, p) for p in pairs])):
        if args.only not in (None, name):
            continue
        tally: dict = {}
        for fn, at in runs:
            for prop, (verdict, cpu) in fn(nb, *at, args.timeout).items():
                t = tally.setdefault((prop, verdict), [])
                t.append(cpu)
                if verdict != "proved":
                    print(f"  {name}{at} {prop}: {verdict}", flush=True)
        for (prop, verdict), cpus in sorted(tally.items()):
            cpus.sort()
            print(f"{name} {args.width}x{args.width} {prop}: {len(cpus)} paths {verdict}, "
                  f"median {cpus[len(cpus) // 2]:.2f} s, max {cpus[-1]:.2f} s CPU", flush=True)


if __name__ == "__main__":
    main()
