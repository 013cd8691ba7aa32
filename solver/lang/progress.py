"""How long work tells its caller how far it is: one protocol for every layer.

A ``progress`` callable hears ``progress(text)`` for a step and, if it declares
``takes_counts = True`` (the command line's printer), ``progress(text, done=k, total=n,
note=...)`` for a count (``text`` names it; ``note`` says what is being done now, e.g. the
action being checked), which it can turn into a rate and a time left.  Any other
one-argument callable (a list's ``append``, a ``print``) gets the counts as text, at most one
line every `PLAIN_EVERY_S` seconds or every `PLAIN_EVERY_N` items per count, as the prover
always said them."""
from __future__ import annotations

import time

PLAIN_EVERY_S = 60.0
PLAIN_EVERY_N = 100


def reporter(progress):
    """``progress`` (or None) as a callable that takes ``(text, done=None, total=None)``."""
    if progress is None:
        return _silent
    if getattr(progress, "takes_counts", False):
        return progress
    return _Plain(progress)


def _silent(text: str, done: int | None = None, total: int | None = None,
            note: str = "") -> None:
    return None


class _Plain:
    """Counts said as text to a one-argument callable, now and then."""

    takes_counts = True

    def __init__(self, fn):
        self.fn = fn
        self.last: dict[str, float] = {}

    def __call__(self, text: str, done: int | None = None, total: int | None = None,
                 note: str = "") -> None:
        if done is None:
            self.fn(text)
            return
        now = time.monotonic()
        final = total is not None and done >= total
        if not final and done % PLAIN_EVERY_N and text in self.last \
                and now - self.last[text] < PLAIN_EVERY_S:
            return
        self.last[text] = now
        self.fn(f"{text}: {done}" + (f" of {total}" if total is not None else "")
                + (f" ({note})" if note else ""))
