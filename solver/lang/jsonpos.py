"""Where the values of a JSON document start, so that an error about a puzzle or a state names
its line and column as well as its path (``file:3:12: board: Board needs the field 'h'``).

Puzzle and state checks name a value by its path from the document: ``file.board``,
``file.board.height[2]``, ``file[1].hand`` for the second puzzle of a list.  `locate` turns
such an error into one located at the deepest value of that path found in the text (a path
may go on inside a value, say a record written as a list, where only the value itself has a
place in the text)."""
from __future__ import annotations

import bisect
import json
import re
from json.decoder import scanstring

from .errors import InputError, Span

_WS = re.compile(r"[ \t\n\r]*")
_STEP = re.compile(r"\.[^.\[]+|\[\d+\]")


def positions(text: str, root: str) -> dict[str, tuple[int, int]]:
    """Path -> (line, column), both 1-based, of every value of ``text`` (valid JSON)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    decoder = json.JSONDecoder()
    out: dict[str, tuple[int, int]] = {}

    def skip(i: int) -> int:
        return _WS.match(text, i).end()

    def value(i: int, path: str) -> int:
        i = skip(i)
        line = bisect.bisect_right(starts, i)
        out[path] = (line, i - starts[line - 1] + 1)
        c = text[i]
        if c not in "{[":
            return decoder.raw_decode(text, i)[1]
        close = "}" if c == "{" else "]"
        i = skip(i + 1)
        n = 0
        while text[i] != close:
            if c == "{":
                key, i = scanstring(text, i + 1)
                i = value(skip(i) + 1, f"{path}.{key}")      # past the colon
            else:
                i = value(i, f"{path}[{n}]")
            n += 1
            i = skip(i)
            if text[i] == ",":
                i = skip(i + 1)
        return i + 1

    value(0, root)
    return out


def locate(err: InputError, root: str, text: str) -> InputError:
    """``err`` (whose message starts with a path from ``root``) located in ``text``; ``err``
    itself when its message names no path of the document."""
    msg = err.message
    if err.span is not None or not msg.startswith(root):
        return err
    path, sep, tail = msg[len(root):].partition(": ")
    if not sep or not re.fullmatch(rf"(?:{_STEP.pattern})*", path):
        return err
    try:
        where = positions(text, root)
    except (ValueError, IndexError, RecursionError):
        return err
    steps = _STEP.findall(path)
    for k in range(len(steps), -1, -1):
        hit = where.get(root + "".join(steps[:k]))
        if hit is not None:
            shown = path.lstrip(".")
            # One line, as every input error: the source line is not quoted under it.
            return InputError(f"{shown}: {tail}" if shown else tail, Span(root, hit[0], hit[1]))
    return err
