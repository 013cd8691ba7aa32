"""Torres puzzle figures for `make bench` (section `torres`): `destinations` and `best-turn` on
mid-game boards taken from seeded 4-player playouts, both backends, median and p95.

Boards are the position after a seeded random playout reaches phase 2 (round 2), so castles,
knights and the king are where random play put them.  Every answer of the z3 backend is
compared with the search backend's."""
from __future__ import annotations

import os
import random
import time

from solver.lang.codec import to_json
from solver.engine.game import load_game
from solver.queries.puzzles import solve
from solver.lang.types import IntT, MapT

GAME = "torres"
TARGETS = {"destinations_ms": 5.0, "best_turn_s": 2.0,
           "best_turn_median_s": 0.5, "best_turn_max_s": 3.0}     # the last two: issue 65


def play_until(g, rng: random.Random, stop, steps: int):
    """The first state of a random playout (each move drawn by ``rng`` among the legal ones)
    that ``stop`` accepts within ``steps`` moves; None when the game ends or the moves run out
    first."""
    st = g.initial()
    for _ in range(steps):
        if stop(st):
            return st
        moves = g.legal(st)
        if not moves:
            return None
        st = rng.choice(moves)[1]
    return None


def boards(seed: int, n: int) -> list[dict]:
    """``n`` mid-game positions (board JSON, the player to move, a knight of theirs)."""
    g = load_game(GAME, (), (("players", 4),))
    fi = g.field_index
    out = []
    i = 0
    while len(out) < n and i < 10 * n:
        rng = random.Random(f"{seed}-torres-{i}")
        i += 1
        st = play_until(g, rng, lambda st: st[fi["phase"]] == 2 and st[fi["round"]] == 2,
                        2000)
        if st is None:
            continue
        t = {f.name: f.type for f in g.p.state}
        height = to_json(MapT(g.p.types["Sq"], IntT(0, 16)), st[fi["height"]])
        occ = to_json(t["occupant"], st[fi["occupant"]])
        turn = st[fi["turn"]]
        knights = [[x, y] for y, row in enumerate(occ) for x, o in enumerate(row) if o == turn]
        if not knights:
            continue
        out.append({"board": {"w": 8, "h": 8, "height": height, "occupant": occ},
                    "player": turn, "piece": knights[0],
                    "knights": st[fi["knights_left"]][turn]})
    return out


def _timed(obj: dict, backend: str, reps: int = 1):
    ts, cs, ans = [], [], None
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        ans = solve(obj, backend=backend)
        ts.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    return sorted(ts)[len(ts) // 2], ans, sorted(cs)[len(cs) // 2]


def _solve_cpu(obj: dict, backend: str = "search", timeout_ms: int = 60_000):
    """The answer and the CPU seconds it took (measured in the worker that solves it)."""
    c0 = time.process_time()
    ans = solve(obj, backend=backend, timeout_ms=timeout_ms)
    return ans, time.process_time() - c0


def _load() -> str:
    return "load average " + "/".join(f"{x:.1f}" for x in os.getloadavg())


def bench_torres(args, table, run_limited, median, p95, rnd) -> dict:
    quick = args.quick
    n = 5 if quick else 20
    bs = boards(args.seed, n)
    res: dict = {"boards": len(bs)}
    solve({"game": GAME, "board": bs[0]["board"], "ask": "destinations",
           "piece": bs[0]["piece"]})                                   # warm-up
    for backend in args.backends:
        ts, cs, disagree = [], [], 0
        for b in bs:
            obj = {"game": GAME, "board": b["board"], "ask": "destinations", "piece": b["piece"]}
            t, ans, c = _timed(obj, backend, 3 if backend == "search" else 1)
            ts.append(t)
            cs.append(c)
            if backend == "z3" and ans != solve(obj, backend="search"):
                disagree += 1
        med = median(ts) * 1000
        cmed = median(cs) * 1000
        res[f"destinations_{backend}"] = {"median_ms": rnd(med), "p95_ms": rnd(p95(ts) * 1000),
                                         "cpu_median_ms": rnd(cmed), "disagreements": disagree,
                                         "load": _load()}
        target = f"< {TARGETS['destinations_ms']:.0f}" if backend == "search" else None
        ok = cmed < TARGETS["destinations_ms"] if backend == "search" else None
        table.add("torres", f"destinations, {backend} ({len(bs)} mid-game boards), CPU", cmed,
                  "ms", target, ok, f"wall-clock median {med:.1f} ms, p95 {p95(ts) * 1000:.1f}"
                  f" ms, {_load()}" + (
                      f"; {disagree} disagreements with search" if backend == "z3" else ""))
    # best-turn: the search backend (branch and bound on the spec's turn_bound) with the
    # puzzle's own time limit: past it the answer is "unknown" with the best turn found so far
    # and an upper bound of the optimum.  CPU seconds are measured in the worker; a hard
    # wall-clock limit guards against a search that does not stop.
    wall = 20.0 if quick else 60.0
    ts, cs, timeouts, gaps = [], [], 0, []

    def turn_of(b):
        return {"game": GAME, "board": b["board"], "ask": "best-turn", "player": b["player"],
                "round": 2, "blocks": 2, "knights": min(1, b["knights"])}
    # The query's code (the bound's defs) is generated on first use in a process, like the
    # game's for `destinations` above: the first board is solved once in a fresh worker (the
    # figure a one-off `rulebook puzzle` sees), then a short cut-off query here generates the
    # code, so that each board's worker, forked from this process, measures the search.
    status, val = run_limited(_solve_cpu, (turn_of(bs[0]), "search", int(wall * 1000)),
                              wall + 60)
    first = val[1] if status == "ok" and val[0]["score"] != "unknown" else None
    solve(turn_of(bs[-1]), backend="search", timeout_ms=1500)
    for b in bs[: (2 if quick else 5)]:
        obj = turn_of(b)
        t0 = time.perf_counter()
        status, val = run_limited(_solve_cpu, (obj, "search", int(wall * 1000)), wall + 60)
        t = time.perf_counter() - t0
        if status == "ok" and val[0]["score"] != "unknown":
            ts.append(t)
            cs.append(val[1])
        else:
            timeouts += 1
            ts.append(wall)
            cs.append(wall)
            if status == "ok" and "best_found" in val[0]:
                gaps.append(f"{val[0]['best_found']['score']}..{val[0]['at_most']['score']}")
    med, cmed = median(ts), median(cs)
    res["best_turn_search"] = {"median_s": rnd(med, 2), "cpu_median_s": rnd(cmed, 2),
                               "cpu_s": [rnd(c, 2) for c in cs],
                               "first_board_cold_cpu_s": None if first is None else rnd(first, 2),
                               "timeouts": timeouts, "wall_s": wall, "load": _load(),
                               "unproved_best_found_to_at_most": gaps}
    table.add("torres", f"best-turn 8x8, search ({len(ts)} boards, {wall:.0f} s limit), CPU",
              cmed, "s", f"< {TARGETS['best_turn_s']:.0f}", cmed < TARGETS["best_turn_s"],
              f"wall-clock median {med:.1f} s; CPU per board "
              f"{', '.join(f'{c:.1f}' for c in cs)} s (the first board alone in a fresh "
              f"process: {'-' if first is None else f'{first:.1f}'} s, code generation "
              f"included); {timeouts} not proved optimal within the limit "
              f"(counted at the limit; best found..upper bound: {', '.join(gaps) or '-'}); "
              f"{_load()}")
    n = len(cs)
    for key, label, val in (("median", "median", cmed), ("max", "max", max(cs))):
        goal = TARGETS[f"best_turn_{key}_s"]
        table.add("torres", f"best-turn 8x8, search ({n} boards), {label} CPU", val, "s",
                  f"<= {goal:g}", val <= goal, "issue 65's goal")
        table.goal(f"best_turn_{key}", f"{val:.2f} s ({n} boards; {timeouts} over the "
                   f"{wall:.0f} s limit)", val <= goal)
    # best-turn on the z3 backend: the 4 x 4 golden board; a timeout must answer "unknown".
    if "z3" in args.backends:
        from pathlib import Path
        import json
        gold = json.loads((Path(__file__).resolve().parent.parent / "tests" / "golden" / "torres"
                           / "best_turn_small.json").read_text())
        t0 = time.perf_counter()
        status, val = run_limited(_solve_cpu, (gold["input"], "z3", 60_000), 120.0)
        t = time.perf_counter() - t0
        ans = val[0] if status == "ok" else None
        verdict = ("timeout" if status == "timeout" else "error" if status == "error"
                   else "unknown" if ans.get("score") == "unknown"
                   else "agrees" if ans.get("score") == gold["expected"]["score"] else "WRONG")
        res["best_turn_z3_4x4"] = {"wall_s": rnd(t, 2), "verdict": verdict,
                                   "cpu_s": rnd(val[1], 2) if status == "ok" else None}
        table.add("torres", "best-turn 4x4, z3 (golden board, 60 s z3 timeout)", t, "s", None,
                  verdict in ("agrees", "unknown"), f"answer: {verdict}; {_load()}")
    return res
