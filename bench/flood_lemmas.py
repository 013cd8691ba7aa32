"""How far z3 gets with a flood read as an unknown set and least-fixpoint facts (docs/prover.md,
Torres invariants).

A flood from a seed (the squares connected to it through built squares) is the least set F
that holds the seed, if built, and is closed under one step (a built square beside a square
of F is in F).  Nothing else is known of F here: each (state, seed) gets its own unknown
set, with (1) the fixpoint equation F = step(F) and (2) least-fixpoint induction, F lies
inside any set X that holds the seed and is closed under the step, instantiated on chosen
X.  Facts that hold for every least fixpoint, so a proof from them is sound for the flood.
The step is Torres' `place`: one block on the square s, the other heights unchanged.  Three
queries on a w x w board (each asks z3 for a counterexample; "unsat" is a proof):

    subset  the old castle of t lies inside the new one (X: the new flood from t);
    area    t's column is no taller than its castle's area after the block, given that it was
            before (one square t, the same facts; area is a count over the flood);
    merge   the number of castles (built squares first in their castle) does not go down
            when s is empty and its built neighbours are one castle, with instances for
            symmetry (X: the seeds whose flood holds u) and transitivity (X: the flood from a
            neighbour, or from one of s and its neighbours).

    python bench/flood_lemmas.py subset area merge --width 4 5 6 [--timeout 300]

Measured on the 2-core machine beside a two-worker proof (z3 of `make install`, 2026-11-27;
the defaults s = 9, t = 2), CPU time: subset 0.01 s (4), 0.02 s (8); area 0.38 s (4), unknown
after 100 s (5; an earlier draft with a count-monotonicity fact added did no better); merge
6.2 s (4), 69 s (5), unknown after 300 s (6).  An
experiment, not part of `make bench`: it tells why the 8 x 8 proofs of `height_within_area`
and `castles_never_merge` are left to bounded model checking.
"""
from __future__ import annotations

import argparse
import time

import z3


def _board(w: int):
    """The squares' neighbours on a w x w board, by index y * w + x."""
    return [[(y + dy) * w + x + dx for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
             if 0 <= x + dx < w and 0 <= y + dy < w]
            for y in range(w) for x in range(w)]


class Floods:
    """Unknown floods of one board and least-fixpoint facts about them."""

    def __init__(self, nb: list[list[int]]):
        self.nb = nb
        self.n = len(nb)
        self.facts: list = []

    def family(self, tag: str, seeds) -> dict:
        return {a: [z3.Bool(f"{tag}{a}_{u}") for u in range(self.n)] for a in seeds}

    def step(self, ok, X, u):
        return z3.Or(X[u], z3.And(ok[u], z3.Or([X[v] for v in self.nb[u]])))

    def fixpoint(self, ok, F, a):
        """(1): F = step(F), and F holds its seed when the seed is built."""
        self.facts += [F[u] == self.step(ok, F, u) for u in range(self.n)]
        self.facts.append(z3.Implies(ok[a], F[a]))

    def least(self, ok, F, a, X):
        """(2): F lies inside X when X holds the seed and is closed under the step."""
        closed = z3.And([z3.Implies(ok[a], X[a])]
                        + [z3.Implies(self.step(ok, X, u), X[u]) for u in range(self.n)])
        self.facts.append(z3.Implies(closed, z3.And([z3.Implies(F[u], X[u])
                                                      for u in range(self.n)])))


def _count(bs):
    return z3.Sum([z3.If(b, 1, 0) for b in bs])


def query(kind: str, w: int, s: int, t: int, timeout: int):
    nb = _board(w)
    n = len(nb)
    height = [z3.Int(f"h{i}") for i in range(n)]
    after = [h + 1 if i == s else h for i, h in enumerate(height)]
    ok, ok2 = [h > 0 for h in height], [h > 0 for h in after]
    fl = Floods(nb)
    seeds = range(n) if kind == "merge" else [t]
    old, new = fl.family("F", seeds), fl.family("G", seeds)
    for a in seeds:
        for k, f in ((ok, old), (ok2, new)):
            fl.fixpoint(k, f[a], a)
            fl.least(k, f[a], a, [z3.BoolVal(False)] * n)
        fl.least(ok, old[a], a, new[a])
        fl.least(ok2, new[a], a, old[a])
    goal = []
    if kind == "subset":
        goal.append(z3.Not(z3.And([z3.Implies(old[t][u], new[t][u]) for u in range(n)])))
    elif kind == "area":
        goal += [z3.Implies(height[t] > 0, height[t] <= _count(old[t])),
                 after[t] > 0, after[t] > _count(new[t])]
    else:
        for k, f in ((ok, old), (ok2, new)):
            for a in range(n):
                for v in nb[a]:
                    fl.least(k, f[v], v, f[a])
                for v in nb[s] + [s]:
                    fl.least(k, f[v], v, f[a])
                    fl.least(k, f[a], a, f[v])
            for u in range(n):
                fl.least(k, f[u], u, [f[y][u] for y in range(n)])

        def castles(k, f):
            return _count([z3.And(k[a], z3.Not(z3.Or([f[a][u] for u in range(a)])))
                           for a in range(n)])
        goal += [z3.Not(ok[s]), z3.Or([ok[v] for v in nb[s]])]
        goal += [z3.Implies(z3.And(ok[d], ok[e]), old[d][e]) for d in nb[s] for e in nb[s]]
        goal.append(castles(ok2, new) < castles(ok, old))
    solver = z3.Solver()
    solver.set("timeout", timeout * 1000)
    solver.add(fl.facts + goal + [h >= 0 for h in height])
    began = time.process_time()
    verdict = solver.check()
    return str(verdict) if verdict != z3.unknown else "unknown", time.process_time() - began


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kinds", nargs="+", choices=("subset", "area", "merge"))
    ap.add_argument("--width", type=int, nargs="+", default=[4, 5, 6])
    ap.add_argument("--square", type=int, default=9, help="where the block goes (index y*w+x)")
    ap.add_argument("--at", type=int, default=2, help="the square t of subset and area")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per query")
    args = ap.parse_args()
    for kind in args.kinds:
        for w in args.width:
            verdict, cpu = query(kind, w, args.square, args.at, args.timeout)
            print(f"{kind} {w}x{w}: {verdict} in {cpu:.2f} s CPU", flush=True)


if __name__ == "__main__":
    main()
