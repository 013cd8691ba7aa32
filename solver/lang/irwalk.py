"""One traversal of the IR, for the analyses that read it (which locals or fields an
expression uses); the IR module itself stays free of behaviour."""
from __future__ import annotations

from typing import Iterator

from . import ir

# IR nodes whose fields hold data, not IR (a constant's value may be a large table).
LEAVES = (ir.Const, ir.Text)
# Fields of every node that are not IR.
NOT_IR = ("type", "span")


def nodes(node) -> Iterator:
    """Every IR node under ``node`` (itself included), in pre-order; types and spans skipped."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(reversed(n))
            continue
        if not hasattr(n, "__dataclass_fields__"):
            continue
        yield n
        if isinstance(n, LEAVES):
            # A constant's value is data (a large table), not IR.
            continue
        for f in reversed(tuple(n.__dataclass_fields__)):
            if f not in NOT_IR:
                stack.append(getattr(n, f))
