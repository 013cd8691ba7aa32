"""What a long command says on stderr while it works, and the time limit that stops it.

`Progress` is the ``progress`` callable the layers above take: ``progress(text)`` for a step
("induction: building the symbolic step"), ``progress(text, done=k, total=n)`` for a count,
to which it adds the rate and, where the total is known, the time left.  On a terminal it
keeps one line up to date; elsewhere (a log, a pipe, a test) it prints one line per step and
a count at most every ``every`` seconds (the first and the last always).

`time_limit` stops the work after some seconds by raising `TimeUp` where the work is, as a
Ctrl-C would (and makes Ctrl-C itself safe to raise): whoever keeps partial results on Ctrl-C
keeps them then too."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time

from ..lang.errors import TimeUp

# Seconds between two lines of one count when stderr is not a terminal.
EVERY_S = 10.0


class Progress:
    """A progress printer for ``stream`` (stderr); see the module's docstring and
    `lang.progress` (the protocol)."""

    takes_counts = True

    def __init__(self, stream=None, tty: bool | None = None, every: float = EVERY_S,
                 clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.every = every
        self.clock = clock
        self.t0 = clock()
        self.counts: dict[str, tuple[float, int]] = {}   # text -> (start, done at start)
        self.last: dict[str, float] = {}                 # text -> when last printed
        self.shown = False                               # a status line is on screen

    def __call__(self, text: str, done: int | None = None, total: int | None = None,
                 note: str = "") -> None:
        now = self.clock()
        if done is not None:
            start, done0 = self.counts.setdefault(text, (now, done))
            final = total is not None and done >= total
            if not self.tty and not final and text in self.last \
                    and now - self.last[text] < self.every:
                return
            self.last[text] = now
            text = f"{text}: {count_text(done, total, done - done0, now - start)}" \
                + (f" — {note}" if note else "")
        self._line(f"[{elapsed(now - self.t0)}] {text}")

    def _line(self, line: str) -> None:
        if self.tty:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            self.stream.write("\r\x1b[K" + line[:width])
            self.shown = True
        else:
            self.stream.write(f"  .. {line}\n")
        self.stream.flush()

    def clear(self) -> None:
        """Take the status line off the terminal (before the command prints its answer)."""
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def count_text(done: int, total: int | None, since: int, seconds: float) -> str:
    """``12/40 (30%), 1.5/s, about 19 s left``: a count, its rate and the time left."""
    out = f"{done}/{total} ({100 * done // total}%)" if total else f"{done}"
    if seconds >= 1 and since > 0:
        rate = since / seconds
        out += f", {rate:.2g}/s" if rate < 10 else f", {rate:.0f}/s"
        if total and done < total:
            out += f", about {elapsed((total - done) / rate)} left"
    return out


def elapsed(seconds: float) -> str:
    """``42 s``, ``3 min 5 s``, ``2 h 10 min``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


@contextlib.contextmanager
def time_limit(seconds: float | None):
    """Stop the work in the main thread after ``seconds`` (None: no limit) with `TimeUp`, and
    on Ctrl-C with KeyboardInterrupt, both raised only where Python code of the project is
    running: one raised inside z3's Python API (most often while ctypes converts an
    argument) would come out as a ctypes error, or leave z3 mid-call, and one raised in a
    library's callback may be swallowed; it is raised a few milliseconds later instead, once
    the work is back in its own code.  Where there is no
    interval timer (Windows) the limit is left to the work's own deadlines.  It yields an
    object whose ``fired`` is the stop raised (None until then): for work that swallows it
    (Sphinx turns a Ctrl-C into its own exit status)."""
    if not hasattr(signal, "setitimer"):
        yield _Stopper(seconds)
        return
    stopper = _Stopper(seconds)
    old_alarm = signal.signal(signal.SIGALRM, stopper.on_alarm)
    old_int = signal.signal(signal.SIGINT, stopper.on_int)
    if seconds is not None:
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield stopper
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_alarm)
        signal.signal(signal.SIGINT, old_int)


# Seconds between two tries at raising a stop that landed inside z3's Python API.
RETRY_S = 0.005


class _Stopper:
    """The signal handlers of `time_limit`."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.pending: BaseException | None = None
        self.fired: BaseException | None = None

    def on_alarm(self, signum, frame):
        self._raise(self.pending or TimeUp(self.seconds), frame)

    def on_int(self, signum, frame):
        self._raise(KeyboardInterrupt(), frame)

    def _raise(self, exc: BaseException, frame):
        if frame is not None and _foreign(frame):
            self.pending = exc
            signal.setitimer(signal.ITIMER_REAL, RETRY_S)
            return
        self.pending = None
        self.fired = exc
        raise exc


# This package's own folder: its code may sit in site-packages too (a plain install).
_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _foreign(frame) -> bool:
    """Whether ``frame`` is code of an installed library, not this package's: z3's Python API
    around the C library, where a stop would come out as a ctypes error or leave z3 mid-call,
    or a callback whose exceptions the interpreter swallows (a collector callback, such as
    Hypothesis installs, where the fuzzing lost a --time-limit's stop)."""
    name = frame.f_code.co_filename
    if name.startswith(_OWN):
        return False
    return f"{os.sep}z3{os.sep}" in name or f"{os.sep}site-packages{os.sep}" in name \
        or f"{os.sep}dist-packages{os.sep}" in name
