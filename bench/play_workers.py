"""One worker against two on `rulebook play --games N` (issue 63, point 3): the same seeded
games with --workers 1 (every game in one process) and --workers 2 (a local Dask cluster of
two worker processes, started once the games have taken 1 s), each run ``--rounds`` times in
turn, the wall-clock and CPU time of each, the ratio of the medians, and whether the --json
output is the same but the timings.

    nice -n 5 .venv/bin/python bench/play_workers.py [GAME] [--games N] [--rounds R]

Default: Les 5 Tours, 2,500 games (about 30 s in one process on this machine).  The times
count everything a user waits for: loading the game, the cluster's start-up and each worker's
loading of the game.  On a machine that other work shares, the figures say more of that load
than of the engine: run it idle.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMINGS = re.compile(r'"seconds": [0-9.e+-]+, "games_per_second": [0-9.e+-]+')


def run(game: str, games: int, workers: int) -> tuple[float, float, str]:
    """Wall-clock seconds, CPU seconds of the children (the workers included) and the --json
    output without its timings, of one run."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "solver", "play", game, "--games", str(games),
                        "--workers", str(workers), "--json"], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"play --workers {workers} failed ({r.returncode}): {r.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, TIMINGS.sub("", r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game", nargs="?", default="les-5-tours")
    ap.add_argument("--games", type=int, default=2500)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    print(f"rulebook play {a.game} --games {a.games}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    walls: dict = {1: [], 2: []}
    outs: dict = {1: set(), 2: set()}
    for i in range(a.rounds):
        for n in (1, 2):
            wall, cpu, out = run(a.game, a.games, n)
            walls[n].append(wall)
            outs[n].add(out)
            print(f"  round {i + 1}, --workers {n}: {wall:6.1f} s wall, {cpu:6.1f} s CPU")
    m1, m2 = statistics.median(walls[1]), statistics.median(walls[2])
    same = len(outs[1] | outs[2]) == 1
    print(f"  medians: {m1:.1f} s and {m2:.1f} s; ratio (1 worker / 2 workers) {m1 / m2:.2f}x; "
          + ("output identical" if same else "output DIFFERS"))
    print(f"  load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
