"""Helpers shared by the sections of `make bench` (bench/run.py): timing, statistics, seeded
random streams, the printed table (with the issue's goals) and children with a wall-clock
limit."""
from __future__ import annotations

import hashlib
import json
import math
import random
import statistics
import sys
import time
import traceback


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def now() -> float:
    return time.perf_counter()


def median(xs):
    return statistics.median(xs) if xs else None


def p95(xs):
    """Nearest-rank 95th percentile."""
    if not xs:
        return None
    s = sorted(xs)
    return s[max(0, math.ceil(0.95 * len(s)) - 1)]


def rnd(x, nd=3):
    return None if x is None else round(x, nd)


def sub_rng(seed: int, *parts) -> random.Random:
    """An independent, reproducible stream per purpose (str seeds hash with SHA-512)."""
    return random.Random("/".join(map(str, (seed,) + parts)))


def fingerprint(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


class Table:
    """The rows of the printed table, which also become the verdict list of the JSON."""

    def __init__(self):
        self.rows: list[dict] = []
        self.goals: dict[str, dict] = {}

    def goal(self, key: str, measured: str, ok: bool | None, fail: bool = False):
        """A figure of the issue's goals (bench/issue65.py, GOALS): what was measured, and
        PASS or MISS (FAIL when its answers were wrong; MISS when ``ok`` is None)."""
        self.goals[key] = {"measured": measured,
                           "verdict": "FAIL" if fail else "PASS" if ok else "MISS"}

    def add(self, section, measure, value, unit, target=None, ok=None, note=""):
        self.rows.append({"section": section, "measure": measure, "value": value, "unit": unit,
                          "target": target, "verdict": None if ok is None else
                          ("PASS" if ok else "MISS"), "note": note})

    def check(self, section, measure, value, unit, note=""):
        """A correctness figure: must be 0."""
        self.rows.append({"section": section, "measure": measure, "value": value, "unit": unit,
                          "target": "= 0", "verdict": "OK" if value == 0 else "FAIL",
                          "note": note})

    def render(self) -> str:
        def fmt(v):
            if v is None:
                return "-"
            if isinstance(v, float):
                if v >= 1000:
                    return f"{v:,.0f}"
                if v >= 100:
                    return f"{v:.1f}"
                if 0 < abs(v) < 0.1:
                    return f"{v:.4f}"
                return f"{v:.2f}"
            return str(v)
        hdr = ("section", "measure", "value", "unit", "target", "verdict", "note")
        body = [(r["section"], r["measure"], fmt(r["value"]), r["unit"], r["target"] or "",
                 r["verdict"] or "", r["note"]) for r in self.rows]
        w = [max(len(str(x[i])) for x in [hdr] + body) for i in range(len(hdr))]
        right = {2}
        line = lambda xs: "  ".join((str(x).rjust(w[i]) if i in right else str(x).ljust(w[i]))
                                    for i, x in enumerate(xs)).rstrip()
        out = [line(hdr), line(["-" * n for n in w])]
        prev = None
        for r in body:
            if prev is not None and r[0] != prev:
                out.append("")
            out.append(line(r))
            prev = r[0]
        return "\n".join(out)


def run_limited(fn, args: tuple, wall_s: float):
    """Run ``fn(*args)`` in a forked child with a hard wall-clock limit.

    Returns ``("ok", value)``, ``("error", text)`` or ``("timeout", None)``.  The child is ours
    and is killed by its pid when over the limit.  Without fork (not Linux), runs in-process."""
    import multiprocessing as mp
    try:
        ctx = mp.get_context("fork")
    except ValueError:
        try:
            return "ok", fn(*args)
        except Exception:
            return "error", traceback.format_exc(limit=3)
    recv, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send(("ok", fn(*args)))
        except BaseException:
            send.send(("error", traceback.format_exc(limit=3)))
        finally:
            send.close()

    p = ctx.Process(target=child, daemon=True)
    p.start()
    send.close()
    try:
        if recv.poll(wall_s):
            try:
                res = recv.recv()
            except EOFError:
                res = ("error", f"child exited with status {p.exitcode}")
        else:
            res = ("timeout", None)
    finally:
        if p.is_alive():
            p.kill()
        p.join()
        recv.close()
    return res


class Worker:
    """One forked child that runs calls one after another, as a batch file runs its puzzles in
    one process, with the same hard wall-clock limit per call as `run_limited`: a call over
    the limit kills the child, and the next call forks a fresh one.  Without fork (not Linux),
    calls run in-process."""

    def __init__(self):
        import multiprocessing as mp
        try:
            self.ctx = mp.get_context("fork")
        except ValueError:
            self.ctx = None
        self.proc = None

    def _start(self):
        recv_req, send_req = self.ctx.Pipe(duplex=False)
        recv_res, send_res = self.ctx.Pipe(duplex=False)

        def serve():
            while True:
                try:
                    msg = recv_req.recv()
                except EOFError:
                    return
                if msg is None:
                    return
                fn, args = msg
                try:
                    send_res.send(("ok", fn(*args)))
                except BaseException:
                    send_res.send(("error", traceback.format_exc(limit=3)))

        self.proc = self.ctx.Process(target=serve, daemon=True)
        self.proc.start()
        recv_req.close()
        send_res.close()
        self.send, self.recv = send_req, recv_res

    def call(self, fn, args: tuple, wall_s: float):
        if self.ctx is None:
            try:
                return "ok", fn(*args)
            except Exception:
                return "error", traceback.format_exc(limit=3)
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.send.send((fn, args))
        if self.recv.poll(wall_s):
            try:
                return self.recv.recv()
            except EOFError:
                self.close()
                return "error", "worker exited"
        self.close()
        return "timeout", None

    def close(self):
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join()
            self.send.close()
            self.recv.close()
            self.proc = None
