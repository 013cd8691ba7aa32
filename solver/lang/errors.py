"""One error format for the whole tool: ``file:line:col: message``, the source line and a caret."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """Where a node came from: file name, 1-based line and column, and the end."""

    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOWHERE = Span("<builtin>", 0, 0)

# How much of a long source line an error shows around its column.
CONTEXT_WIDTH = 100


class RulebookError(Exception):
    """Base of every error the CLI reports in one line (plus context) with exit status 2."""

    def __init__(self, message: str, span: Span | None = None, source: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.source = source

    def headline(self) -> str:
        if self.span is None or self.span is NOWHERE:
            return self.message
        return f"{self.span}: {self.message}"

    def context(self) -> str:
        """Return the offending source line with a caret under the column, if known."""
        if self.span is None or self.source is None or self.span.line <= 0:
            return ""
        lines = self.source.splitlines()
        if self.span.line > len(lines):
            return ""
        text, col = lines[self.span.line - 1], self.span.col
        if len(text) > CONTEXT_WIDTH:
            # A long line is shown around the column only.
            start = max(0, min(col - 1 - CONTEXT_WIDTH // 2, len(text) - CONTEXT_WIDTH))
            text = ("..." if start else "") + text[start:start + CONTEXT_WIDTH] + (
                "..." if start + CONTEXT_WIDTH < len(text) else "")
            col = col - start + (3 if start else 0)
        return f"    {text}\n    {' ' * (col - 1)}^"

    def __str__(self) -> str:
        ctx = self.context()
        return self.headline() + ("\n" + ctx if ctx else "")


class SpecError(RulebookError):
    """A rules file that does not parse or does not type-check."""


class EvalError(RulebookError):
    """A rule that fails while being evaluated (an index out of range, an empty sequence)."""


class InputError(RulebookError):
    """A malformed or impossible puzzle, state or command-line argument."""


class VariantError(InputError):
    """A variant that names no expansion or reading option of the game, or a second option of
    one reading; ``variant`` is the reading's name (or the expansion as written), so that a
    puzzle file can point at the entry of its "variants" at fault."""

    def __init__(self, message: str, variant: str):
        super().__init__(message)
        self.variant = variant


class Disagreement(RulebookError):
    """The solver's answer did not replay in the interpreter: a bug, reported loudly."""


class TimeUp(KeyboardInterrupt):
    """A command's time limit (``--time-limit``) ran out.  It is raised where the work is, as a
    Ctrl-C would be (a KeyboardInterrupt, so that no ``except Exception`` swallows it), and
    whoever keeps partial results on Ctrl-C keeps them on it too, saying which of the two
    stopped the work."""

    def __init__(self, seconds: float | None = None):
        super().__init__(f"the time limit ({seconds:g} s) ran out" if seconds is not None
                         else "the time limit ran out")
        self.seconds = seconds


def stop_reason(e: BaseException) -> str:
    """How a stopped run says why it stopped: "time limit (N s)" or "interrupted"."""
    if isinstance(e, TimeUp):
        return "time limit" + (f" of {e.seconds:g} s" if e.seconds is not None else "")
    return "interrupted"
