"""Torres' inductive step under `rulebook prove --region-facts`, sampled on the 8 x 8 board.

The whole step has 70,208 action paths in 4 cases on 8 x 8 (one per player to move) and takes
about 15 minutes a case to build: too long to try each change of the region facts on.  This
builds a random sample of the paths of the actions that change the board's heights (those the
two castle properties read), checks them as the proof does (`height_within_area` with every
other invariant assumed, in one Houdini round; then the transition `castles_never_merge`,
from every invariant), and says for each path how long it took and what z3 said: held,
broke a property (a counterexample to induction, maybe one the facts do not rule out) or
gave up.  Samples, not a proof: `rulebook prove --region-facts` is the proof.

    python bench/torres_region_sample.py [--per-action 4] [--seed 1] [--cases 1]
        [--step-timeout 20] [--actions place,play_relocate_block] [--param w=8 --param h=8]
        [--orbits] [--json]

Exit status 2 on bad arguments, 0 otherwise (a path z3 gave up on is a figure, not an error).
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import z3  # noqa: E402

from solver.prover import induction, splits, tiers, transitions  # noqa: E402
from solver.prover.journal import Journal, run_key  # noqa: E402
from solver.prover.options import ProveOptions  # noqa: E402
from solver.prover.orbits import Symmetric  # noqa: E402

from solver.prover import regionfacts  # noqa: E402
from solver.prover.abstractions import Opaque  # noqa: E402

from solver.prover import symmetry  # noqa: E402
from solver.lang.types import finite  # noqa: E402
from solver.lang.errors import RulebookError  # noqa: E402
from solver.engine.game import load_game  # noqa: E402
from solver.engine.symbolic import Branch, Unknown, pin_guard  # noqa: E402
from solver.engine import domains as dz  # noqa: E402

# The actions that change `height` (the others leave both castle properties' conjuncts as
# they were: the step does not even ask z3 about them).
BLOCK_ACTIONS = ("place", "play_reserve_block", "play_block_under", "play_relocate_block")
PROPERTIES = ("height_within_area", "castles_never_merge")


class OneRound(Exception):
    """Houdini's first round is over: a candidate fell, and the sample is what is measured,
    not the retry without it."""


def sampled_branches(per_action: int, actions: tuple[str, ...], seed: int,
                     orbits: bool = False):
    """`symbolic.branches` over symbolic states, keeping ``per_action`` random instances of
    each of ``actions`` (the same squares in every case: one seed); with ``orbits``, each
    followed by its images under the board's symmetries (`solver.prover.symmetry`)."""
    real = splits.branches

    def images(game, a, params) -> list:
        grid, _ = symmetry.grid_of(game)
        if grid is None:
            return []
        fin = finite(grid)
        out = []
        for _, perm in symmetry.permutations(grid):
            q = tuple(fin.values[perm[fin.index[p]]] if symmetry.is_square(b, grid) else p
                      for b, p in zip(a.ir.params, params))
            if q != tuple(params) and q not in out:
                out.append(q)
        return out

    def branches(game, st, actions_=None, concrete=None):
        if concrete or dz.is_concrete(st):
            return real(game, st, actions_, concrete)
        out = []
        for a in game.actions:
            if a.name not in actions:
                continue
            inst = a.sym_instances(st)
            rng = random.Random(f"{seed}:{a.name}")
            picked = rng.sample(inst, min(per_action, len(inst)))
            if orbits:
                by = {tuple(p): (g_, p) for g_, p in inst}
                picked = [x for g_, p in picked
                          for x in [(g_, p)] + [by[q] for q in images(game, a, p) if q in by]]
            for g, params in picked:
                g = dz.and_(g, pin_guard(actions_, a, params))
                if g is False:
                    continue
                for guard, st2, ctx in a.sym_apply(st, params):
                    full = dz.and_(g, guard)
                    if full is not False:
                        out.append(Branch(a.name, params, full, st2, ctx.shows))
        return out
    return branches


class TimedJournal(Journal):
    """A journal (a scratch file) whose records carry the seconds since the previous record
    or progress message, and which hears of each query z3 gave up on."""

    def __init__(self, *a, **k):
        self.events: list[dict] = []
        self.mark = time.perf_counter()
        super().__init__(*a, **k)

    def _append(self, record: dict) -> None:
        now = time.perf_counter()
        self.events.append({**record, "seconds": round(now - self.mark, 2)})
        self.mark = now
        super()._append(record)


def measure(per_action: int, seed: int, n_cases: int, step_ms: int, actions, params,
            say, orbits: bool = False) -> dict:
    g = load_game("torres", (), tuple(sorted(params.items())))
    names = {i.name for i in g.p.invariants}
    for n in PROPERTIES:
        if n not in names:
            raise RulebookError(f"torres has no invariant named {n!r}")
    state_invs = [i for i in g.p.invariants if not i.transition]
    trans = [i for i in g.p.invariants if i.transition and i.name in PROPERTIES]
    real_branches, real_cases, real_step = splits.branches, splits.cases, tiers.step_each
    gave_up: list[dict] = []
    journal: list[TimedJournal] = []

    def step_each(*a, **k):
        try:
            return real_step(*a, **k)
        except Unknown:
            gave_up.append({"property": a[4], "seconds": None})
            raise

    def heard(msg: str) -> None:
        say(msg)
        if journal:
            journal[0].mark = time.perf_counter()   # a path's time starts after the message
        if msg.startswith("induction: not inductive"):
            raise OneRound(msg)
    splits.branches = sampled_branches(per_action, actions, seed, orbits)
    mirror = Symmetric(g, heard) if orbits else None
    splits.cases = lambda *a, **k: real_cases(*a, **k)[:n_cases]
    tiers.step_each = step_each
    options = ProveOptions(step_timeout_ms=step_ms, opaque_fix=True, region_facts=True)
    fell: dict = {}
    t0 = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            step = Opaque(reals=True, fixes=True, regions=regionfacts.RegionFacts())
            with g.symbolic.abstracted(step):
                key = run_key(g, options, state_invs)
                journal.append(TimedJournal(Path(tmp) / "journal.jsonl", key, heard))
                try:
                    induction.houdini(g, state_invs, options, heard, journal[0], mirror)
                except OneRound as e:
                    fell["invariants"] = str(e)
                assumed = {i.name for i in state_invs}
                out = transitions.check_transitions(g, trans, assumed, options, heard,
                                                    journal[0], mirror)
                fell.update({n: why for n, (ok, why) in out.items() if ok is not True})
    finally:
        splits.branches, splits.cases, tiers.step_each = real_branches, real_cases, real_step
    paths = [e for e in journal[0].events if e.get("kind", "step") in ("step", "transition")]
    rows = []
    for e in paths:
        if e.get("kind") == "transition":
            broke = {n: w for n, w in (e.get("verdicts") or {}).items() if w is not None}
            prop = "castles_never_merge"
        else:
            broke = {n: w for n, w in (e.get("fell") or {}).items() if n in PROPERTIES}
            prop = "invariants"
        rows.append({"pass": prop, "case": e["case"], "path": e["path"],
                     "action": e["action"] + (" (mirrored)" if e.get("by") else ""),
                     "seconds": e["seconds"], "broke": broke})
    return {"params": params, "per_action": per_action, "seed": seed, "cases": n_cases,
            "step_timeout_s": step_ms / 1000, "z3": z3.get_version_string(),
            "seconds": round(time.perf_counter() - t0, 1), "paths": rows,
            "gave_up": len(gave_up), "fell": fell}


def summary(res: dict) -> str:
    lines = [f"torres {res['params']}, {res['per_action']} paths per action and case, "
             f"{res['cases']} case(s), seed {res['seed']}, {res['step_timeout_s']:g} s a "
             f"query, z3 {res['z3']}: {res['seconds']:.0f} s in all"]
    by: dict = {}
    for r in res["paths"]:
        by.setdefault((r["pass"], r["action"]), []).append(r)
    for (p, a), rs in sorted(by.items()):
        ts = [r["seconds"] for r in rs]
        broke = sum(1 for r in rs if r["broke"])
        lines.append(f"  {p:<20} {a:<22} {len(rs):>3} decided, median {statistics.median(ts):6.1f}"
                     f" s, max {max(ts):6.1f} s, {broke} broke a property")
    lines.append(f"  queries z3 gave up on (each retried on all the invariants at once, for "
                 f"the transition): {res['gave_up']}")
    for n, why in res["fell"].items():
        lines.append(f"  {n}: {why[:300]}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-action", type=int, default=4, metavar="K",
                    help="random paths of each action per case (default 4)")
    ap.add_argument("--seed", type=int, default=1, help="which paths (default 1)")
    ap.add_argument("--cases", type=int, default=1, choices=range(1, 5), metavar="N",
                    help="how many of the 4 cases (players to move) to sample (default 1)")
    ap.add_argument("--step-timeout", type=float, default=20.0, metavar="S",
                    help="seconds a query, as prove's --step-timeout (default 20)")
    ap.add_argument("--actions", default=",".join(BLOCK_ACTIONS),
                    help="comma-separated actions to sample (default: the block actions)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=N",
                    help="a spec parameter (default w=8, h=8)")
    ap.add_argument("--orbits", action="store_true",
                    help="sample orbits: each path followed by its images under the board's "
                    "symmetries, checked as prove --symmetry does (the first of each orbit "
                    "proved, the others settled from it when they follow)")
    ap.add_argument("--json", action="store_true", help="every path's figures as JSON")
    args = ap.parse_args(argv)
    params = {"w": 8, "h": 8}
    for p in args.param:
        name, _, v = p.partition("=")
        if not v.lstrip("-").isdigit():
            ap.error(f"--param {p}: expected NAME=INTEGER")
        params[name] = int(v)
    actions = tuple(a for a in args.actions.split(",") if a)
    if args.per_action < 1:
        ap.error("--per-action: at least 1")
    try:
        g = load_game("torres", (), tuple(sorted(params.items())))
        unknown = [a for a in actions if a not in {x.name for x in g.actions}]
        if unknown:
            ap.error(f"--actions: torres has no action {', '.join(unknown)}")
        res = measure(args.per_action, args.seed, args.cases, int(args.step_timeout * 1000),
                      actions, params, lambda m: print(f"  .. {m}", file=sys.stderr, flush=True),
                      args.orbits)
    except RulebookError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(res, indent=1) if args.json else summary(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
