"""One worker against two on one proof (issue 63, point 3): `rulebook prove` run twice from
scratch (no proof store), with --workers 1 (every path in one process) and --workers 2 (a
local Dask cluster of two worker processes), the wall-clock time of each, the ratio, and
whether the verdicts are the same.  The goal is a ratio of at least 1.7 on a 2-core machine.

    .venv/bin/python bench/prove_workers.py [GAME] [--param NAME=N ...] [--depth K]
        [--rounds R] [--json]

With ``--rounds R``, R pairs alternated (one worker first, then two first, ...), the ratio of
the mean times: on this machine one process's run of the same proof took from 82 to 137 s
within an hour, more than the gap measured.

Default: Torres on its smallest board (2x2, 2 players, stacks of 1), the proof `make demo`
runs live.  The times count everything a user waits for: loading the game, the cluster's
start-up (some seconds), and the paths each worker builds again for itself.  On a machine
that other work shares, the figures say more of that load than of the engine: run it idle.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["torres", "--param", "w=2", "--param", "h=2", "--players", "2",
           "--param", "stack=1"]


def run(args: list[str], workers: int) -> tuple[float, float, dict]:
    """Wall-clock seconds, CPU seconds of the children (the workers included) and the JSON
    output of one proof."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "solver", "prove", *args, "--no-store",
                        "--workers", str(workers), "--json"], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):
        sys.exit(f"prove --workers {workers} failed ({r.returncode}): {r.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", nargs="?", default=None)
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--depth", default="1")
    ap.add_argument("--rounds", type=int, default=1,
                    help="pairs of runs, alternated (1, 2, then 2, 1, ...): this machine's "
                    "speed drifts by more than the gap measured, so a pair says little; the "
                    "ratio of the means is given (default: %(default)s)")
    ap.add_argument("--json", action="store_true", help="print the runs as JSON")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds: at least 1")
    args = ([a.game] + [x for p in a.param for x in ("--param", p)]) if a.game else DEFAULT
    args += ["--depth", a.depth]
    if not a.json:
        print(f"rulebook prove {' '.join(args)} --no-store; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    runs: list = []
    verdicts: dict = {}
    for k in range(a.rounds):
        for n in ((1, 2) if k % 2 == 0 else (2, 1)):
            wall, cpu, got = run(args, n)
            verdicts.setdefault(n, set()).add(json.dumps(
                {r["invariant"]: (r["status"], r.get("depth")) for r in got["results"]},
                sort_keys=True))
            runs.append({"workers": n, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                         "checked": got["paths"]["checked"]})
            if not a.json:
                print(f"  --workers {n}: {wall:7.1f} s wall, {cpu:7.1f} s CPU, "
                      f"{got['paths']['checked']} paths checked", flush=True)
    mean = {n: sum(r["wall_s"] for r in runs if r["workers"] == n) / a.rounds for n in (1, 2)}
    same = len(verdicts[1] | verdicts[2]) == 1
    if a.json:
        print(json.dumps({"args": args, "runs": runs, "mean_wall_s": mean,
                          "ratio": round(mean[1] / mean[2], 3), "verdicts_identical": same}))
        return
    print(f"  ratio (1 worker / 2 workers, mean of {a.rounds} each): "
          f"{mean[1] / mean[2]:.2f}x; verdicts "
          + ("identical" if same else f"DIFFER: {sorted(verdicts[1] | verdicts[2])}"))
    print(f"  load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
