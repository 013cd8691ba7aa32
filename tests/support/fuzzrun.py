"""Running the fuzzing's cases (`support.fuzzcases`) through the command line, in this process,
and judging each run.  A run passes when the command

- answered: exit status 0 (1 for a "no", 4 when its own --time-limit ran out) with
  well-formed output (JSON under --json), or
- refused: exit status 2 with ONE line on stderr (a rules file's error adds its source line
  and a caret), starting "rulebook", naming where (the input file, or the option),

never raised (a traceback), and took under `SLOW` seconds of processor time (past its own
time allowance when it stopped there and said so: see `budget`).  The fuzzing runs
every command in one long process whose heap (Hypothesis, the games cached) makes Python's
collector slower than in a user's fresh process, so a run past `SLOW` is run again alone, in a
fresh process, and judged by that time (both are logged: ``cpu`` the judged, ``cpu_shared`` the
first).  The two
backends' answers to a valid puzzle must agree wherever both give one (a yes/no, a count, a
best score).

A run is logged (``RULEBOOK_FUZZ_LOG``) as one JSON line: the stream, the command (the input
file's path replaced by its name), the exit status, processor and clock seconds, the input's
digest, whether it was drawn valid, whether the answer holds an "unknown" (a solver out of
time), and the failure if any; a failing input is saved whole
under the fuzzing's directory (``RULEBOOK_FUZZ_DIR``, default build/fuzz):
``failures/DIGEST/`` holds the input file and ``case.json`` (the command, its output, why).

Stopping: a round's chunk of a stream ends after its number of examples or its share of
processor time; a finished chunk leaves a mark in ``done/``, and a rerun (``make fuzz``
again) skips the chunks marked, so a run stopped part-way resumes."""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import atexit
import shutil
from functools import lru_cache

import solver.cli.main as cli
from solver.cli.main import main
from support.fuzzcases import FILE, Case

ROOT = Path(__file__).resolve().parents[2]
# The bound on one command, in processor seconds (the clock counts the other
# sessions sharing the machine; both are logged).
SLOW = float(os.environ.get("RULEBOOK_FUZZ_SLOW", "10"))
# Past this much processor time a command is stopped as hung (SIGPROF).
HANG = 6 * SLOW
ANSWERED = {"check": (0,), "moves": (0,), "solve": (0, 4), "play": (0, 4), "examples": (0, 1, 4),
            "prove": (0, 1, 4), "ambiguities": (0, 4)}


def fuzz_dir() -> Path:
    return Path(os.environ.get("RULEBOOK_FUZZ_DIR") or ROOT / "build" / "fuzz")


class Hung(BaseException):
    """A command ran past `HANG` seconds of processor time."""


@dataclass
class Outcome:
    argv: list[str]
    status: object
    out: str
    err: str
    cpu: float
    wall: float
    failure: str | None = None
    trace: str | None = None
    cpu_shared: float | None = None    # the time in the fuzzing's process, when run again alone


@dataclass
class Tally:
    """What a chunk ran: runs, failures (one line each, with the saved input)."""
    runs: int = 0
    failures: list[str] = field(default_factory=list)


@lru_cache(maxsize=1)
def _parser():
    """The command's argument parser, built once: building it takes 5 ms (argparse looks up
    its messages' translations for every option), a quarter of a refusal's time."""
    return _BUILD()


_BUILD = cli.build_parser


@lru_cache(maxsize=1)
def _scratch() -> str:
    """A folder for this process's input files, reused (removing a folder per input took
    3 ms)."""
    d = tempfile.mkdtemp(prefix="rbfuzz")
    atexit.register(shutil.rmtree, d, True)
    return d


def _call(argv: list[str]) -> Outcome:
    """``rulebook ARGV`` in this process: its status (or the exception it raised), output and
    times."""
    out, err = io.StringIO(), io.StringIO()
    built, cli.build_parser = cli.build_parser, _parser
    old = signal.signal(signal.SIGPROF, _hung)
    signal.setitimer(signal.ITIMER_PROF, HANG + allowance(argv))
    t0, c0 = time.perf_counter(), time.process_time()
    trace = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status: object = main(argv)
    except SystemExit as e:              # argparse
        status = e.code
    except Hung:
        status = "hung"
    except KeyboardInterrupt:
        raise
    except BaseException as e:           # a traceback
        status = f"{type(e).__name__}: {e}"[:300]
        trace = traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
        cli.build_parser = built
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    return Outcome(argv, status, out.getvalue(), err.getvalue(), cpu, wall, trace=trace)


_ALONE = "import sys; from solver.cli.main import main; sys.exit(main(sys.argv[1:]))"


def _alone(o: Outcome) -> None:
    """Run a slow command again in a fresh process, and judge it by that processor time (the
    child's, user and system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        subprocess.run([sys.executable, "-c", _ALONE, *o.argv], cwd=ROOT, timeout=4 * HANG,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return                           # judged by the first time: slow
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    o.cpu_shared = o.cpu
    o.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _hung(signum, frame):
    raise Hung()


def judge(o: Outcome, input_name: str | None) -> str | None:
    """Why the run ``o`` fails the fuzzing's rules, or None."""
    command = o.argv[0]
    if isinstance(o.status, str):
        return "hung" if o.status == "hung" else f"raised {o.status}"
    if o.status == 130:
        raise KeyboardInterrupt          # the run was stopped (Ctrl-C): stop the chunk
    if "Traceback" in o.err:
        return "a traceback on stderr"
    if o.cpu >= SLOW + budget(o):
        return f"slow: {o.cpu:.1f} s of processor time"
    if o.status == 2:
        lines = o.err.splitlines()
        if not lines or not lines[0].startswith("rulebook"):
            return "refused without a 'rulebook' line"
        if not (len(lines) == 1 or (len(lines) == 3 and lines[2].strip() == "^")):
            return f"refused in {len(lines)} lines"
        head = lines[0]
        if "interpreter" in head:
            return "the backends' answer does not replay in the interpreter"
        if "recursion limit" in head:
            return "hit Python's recursion limit (reported as a bug)"
        if not _names_where(head, o.argv, input_name):
            return "the refusal does not say where (the file or the option)"
        return None
    if o.status not in ANSWERED.get(command, (0,)):
        return f"exit status {o.status}"
    if "--json" in o.argv and o.status in (0, 1):
        try:
            doc = json.loads(o.out)
        except ValueError:
            return "the --json output is not JSON"
        if command == "moves" and not (isinstance(doc, dict) and "moves" in doc):
            return "moves --json without 'moves'"
    elif o.status == 0 and command in ("moves", "play", "check") and not o.out.strip():
        return "answered with no output"
    return None


def budget(o: Outcome) -> float:
    """The time a run that stopped at its own time limit was allowed: its --time-limit, else
    its --timeout (the default included: `solve` gives a search 60 s); 0 for a run that did
    not say it ran out of time ("unknown", "stopped", exit status 4).  Such a run is judged
    by the time it took past that allowance."""
    if not (o.status == 4 or '"unknown"' in o.out or "unknown" in o.out.split()[:1]
            or '"stopped"' in o.out):
        return 0.0
    return allowance(o.argv)


def allowance(argv: list[str]) -> float:
    """The command's own time limit: its --time-limit, else its --timeout (default included),
    else 0."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            ns = _parser().parse_args(argv)
    except SystemExit:
        return 0.0
    limits = [x for x in (getattr(ns, "time_limit", None), getattr(ns, "timeout", None)) if x]
    return float(min(limits)) if limits else 0.0


def _names_where(head: str, argv: list[str], input_name: str | None) -> bool:
    """Whether a refusal's line names its place: the input file when the command reads one,
    else an option or argument of the command line (or none: a command line without a file
    is its own place, e.g. a playout that meets a dead end)."""
    if input_name is None or input_name in head:
        return True
    return "argument " in head or any(a.startswith("--") and a in head for a in argv[1:])


def _digest(case: Case) -> str:
    h = hashlib.sha256(json.dumps(case.argv).encode())
    h.update(case.data or b"")
    return h.hexdigest()[:16]


def _log(case: Case, o: Outcome, digest: str, input_name: str | None) -> None:
    log = os.environ.get("RULEBOOK_FUZZ_LOG")
    if not log:
        return
    argv = [("FILE" if input_name and a.endswith(input_name) else a) for a in o.argv]
    line = json.dumps({"stream": case.stream, "argv": argv, "status": o.status,
                       "cpu": round(o.cpu, 3), "wall": round(o.wall, 3), "digest": digest,
                       **({"cpu_shared": round(o.cpu_shared, 3)} if o.cpu_shared else {}),
                       "valid": case.valid, "unknown": '"unknown"' in o.out,
                       "fail": o.failure}, ensure_ascii=True) + "\n"
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())      # one write: lines of parallel workers never mix
    finally:
        os.close(fd)


def _save(case: Case, o: Outcome, digest: str) -> Path:
    where = fuzz_dir() / "failures" / digest
    where.mkdir(parents=True, exist_ok=True)
    if case.data is not None:
        (where / f"input{case.suffix}").write_bytes(case.data)
    (where / "case.json").write_text(json.dumps(
        {"stream": case.stream, "argv": o.argv, "status": o.status, "why": o.failure,
         "cpu": o.cpu, "cpu_shared": o.cpu_shared, "stderr": o.err[-5000:], "stdout": o.out[:5000], "trace": o.trace},
        indent=1, ensure_ascii=False), encoding="utf-8")
    return where


def run_case(case: Case, tally: Tally) -> None:
    """Run ``case`` (and its follow-ups when it is answered), judge, log, and keep what
    failed."""
    digest = _digest(case)
    path = None
    if case.data is not None:
        # A name of its own: a game is cached by the path of its rules file.
        path = os.path.join(_scratch(), f"{digest}{case.suffix}")
        Path(path).write_bytes(case.data)
    name = os.path.basename(path) if path else None
    try:
        _run(case, path, name, digest, tally)
    finally:
        if path:
            os.unlink(path)


def _run(case: Case, path: str | None, name: str | None, digest: str, tally: Tally) -> None:

    def argv_of(template):
        return [path if a == FILE else a for a in template]

    first = None
    runs = [argv_of(case.argv)]
    if case.compare:
        runs.append(argv_of(case.argv) + ["--backend", "z3"])
    outcomes = []
    for argv in runs:
        o = _judged(argv, name)
        outcomes.append(o)
        first = first or o
    if case.compare and not any(o.failure for o in outcomes):
        outcomes[-1].failure = _disagreement(outcomes[0], outcomes[1])
    if first.status == 0 and not first.failure:
        for template in case.then:
            outcomes.append(_judged(argv_of(template), name))
    for o in outcomes:
        tally.runs += 1
        _log(case, o, digest, name)
        if o.failure:
            saved = _save(case, o, digest)
            tally.failures.append(f"{o.failure}: {' '.join(o.argv)} (saved in {saved})")


def _judged(argv: list[str], name: str | None) -> Outcome:
    """``rulebook ARGV`` run and judged (run again alone when it was slow here)."""
    o = _call(argv)
    if not isinstance(o.status, str) and o.cpu >= SLOW + budget(o):
        _alone(o)
    o.failure = judge(o, name)
    return o


def _disagreement(search: Outcome, z3: Outcome) -> str | None:
    """Where the two backends' answers to one puzzle differ: the yes/no, counts and best
    scores that both give (a plan or an order of moves may differ)."""
    if search.status != z3.status:
        return f"the backends' exit statuses differ: search {search.status}, z3 {z3.status}"
    if search.status != 0:
        return None
    a, b = json.loads(search.out), json.loads(z3.out)
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return None
    if "best_found" in a or "best_found" in b:
        return None                       # out of time: bounds, not answers
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        if isinstance(x, (bool, int)) and isinstance(y, (bool, int)) and x != y:
            return f"the backends disagree on {key}: search {x!r}, z3 {y!r}"
    return None


def done_mark(round_: int, stream: str) -> Path:
    return fuzz_dir() / "done" / f"{round_:04d}-{stream.replace('/', '_')}"
