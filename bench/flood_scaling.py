"""How an exact encoding of connected regions scales in z3 (docs/prover.md, Torres).

The core of Torres' `castles_never_merge`: a block put on an empty square s beside castles
that are all one castle never lowers the number of castles.  Each state's castles are a
component labelling pinned down by local constraints (every built square is labelled with a
square no later than itself, equal to its built neighbours' labels, and reached from the
square of its label by strictly decreasing ranks), so the count is exact, with no flood
unrolled.  z3 is asked for a counterexample on a w x w board, s in the middle:

    python bench/flood_scaling.py 3 4 5 6 [--timeout 600]

Measured on the 2-core machine, otherwise idle (z3 5.4.1, 2026-11-26): 0.02 s (3), 0.16 s (4), 8.2 s (5),
unknown after 600 s (6).  An experiment, not part of `make bench`: it tells why the 8 x 8
proof of that invariant is left to bounded model checking.
"""
from __future__ import annotations

import argparse
import time

import z3


def _neighbours(x: int, y: int, w: int) -> list[int]:
    """The squares beside (x, y) on a w x w board, by index x * w + y."""
    return [u * w + v for u, v in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))
            if 0 <= u < w and 0 <= v < w]


def _labelling(tag: str, built: list, w: int):
    """Labels and the constraints that make them the board's component labelling."""
    n = w * w
    lab = [z3.Int(f"{tag}l{i}") for i in range(n)]
    rank = [z3.Int(f"{tag}r{i}") for i in range(n)]
    cs = []
    for x in range(w):
        for y in range(w):
            i = x * w + y
            nb = _neighbours(x, y, w)
            cs.append(z3.Implies(built[i], z3.And(lab[i] <= i, lab[i] >= 0, rank[i] >= 0)))
            cs += [z3.Implies(z3.And(built[i], built[j]), lab[i] == lab[j]) for j in nb]
            cs.append(z3.Implies(built[i], z3.Or(
                z3.And(lab[i] == i, rank[i] == 0),
                *[z3.And(built[j], lab[j] == lab[i], rank[j] < rank[i]) for j in nb])))
    return lab, cs


def counterexample(w: int, timeout_s: float) -> tuple[str, float]:
    """z3's answer (unsat: none exists) and its time, for a w x w board."""
    n = w * w
    s = (w // 2) * w + w // 2
    built = [z3.Bool(f"b{i}") for i in range(n)]
    after = [z3.BoolVal(True) if i == s else built[i] for i in range(n)]
    l1, c1 = _labelling("a", built, w)
    l2, c2 = _labelling("c", after, w)

    def castles(b, lab):
        return z3.Sum([z3.If(z3.And(b[i], lab[i] == i), 1, 0) for i in range(n)])
    nb = _neighbours(*divmod(s, w), w)
    solver = z3.Solver()
    solver.set("timeout", int(timeout_s * 1000))
    solver.add(c1 + c2)
    solver.add(z3.Not(built[s]), z3.Or([built[j] for j in nb]))
    solver.add([z3.Implies(z3.And(built[a], built[b]), l1[a] == l1[b]) for a in nb for b in nb])
    solver.add(castles(after, l2) < castles(built, l1))
    t0 = time.perf_counter()
    r = solver.check()
    return str(r), time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", type=int, nargs="*", default=[3, 4, 5], help="board widths")
    ap.add_argument("--timeout", type=float, default=600.0, help="z3 limit per board, s")
    args = ap.parse_args()
    for w in args.sizes:
        r, t = counterexample(w, args.timeout)
        print(f"{w}x{w}: {r} in {t:.2f} s", flush=True)


if __name__ == "__main__":
    main()
