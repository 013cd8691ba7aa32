"""`reachable using a, b within N: goal`: a bounded search from the current state, in the
interpreter; and what the symbolic evaluator makes of it.

Concretely the answer is exact: a depth-first search over the legal moves of the named actions
(`Game.legal`, so every `requires` of a move is asked as in play), at most N moves deep, the
answer for each state met kept per game with its bound (and the values of the locals around the
search that its goal reads), so that a playout's next state, usually among them, is a lookup.
A `reachable` inside the moves it searches (a move legal only if something stays reachable
after it) is searched in turn, its answers kept the same way; a search that nests deeper than
`MAX_NESTING` is an error, not an endless loop.

Symbolically, over a state whose values are all known the concrete search decides it; over a
state with unknowns it is an unknown boolean (`Searches.unknown`), a new z3 constant for each
evaluation.  That over-approximates: a proof of an invariant from it holds whatever the
searches answer (a step that holds for every value of an unknown holds for the true one), and
any move z3 finds through it is replayed in the interpreter before it is shown."""
from __future__ import annotations

import itertools

import z3

from ..lang import ir
from ..lang.errors import EvalError
from ..lang.irwalk import nodes
from ..lang.types import Type
from . import domains as dz
from . import fixinc

MAX_NESTING = 64
_OPAQUE = itertools.count()


class Searches:
    """One game's `reachable` searches: the answers found so far (by node, state and bound)
    and how deeply searches are nested now."""

    def __init__(self, game):
        self.game = game
        self.known: dict = {}
        self.depth = 0
        self.unknowns = 0       # searches z3 read as unknown booleans (`unknown`)
        # A list, for a caller that decides the unknowns later over known states (a
        # differential test): each unknown with the search, state and frame it stands for.
        self.record: list | None = None
        self._compiled: dict = {}
        self._outer: dict = {}
        self._summaries: dict = {}

    def unknown(self, e: ir.Reachable, st, env):
        """A new unknown boolean for search ``e`` over ``st`` (a state with unknowns)."""
        self.unknowns += 1
        b = z3.Bool(f"reachable!{next(_OPAQUE)}")
        if self.record is not None:
            self.record.append((b, e, st, list(env)))
        return b

    def concrete(self, e: ir.Reachable):
        """The interpreter's closures of ``e``'s bound, goal and set-up (None without one)."""
        hit = self._compiled.get(id(e))
        if hit is None or hit[0] is not e:
            cc = self.game.concrete
            hit = self._compiled[id(e)] = (e, cc.expr(e.within), cc.expr(e.goal),
                                           cc.stmts(e.setup) if e.setup else None)
        return hit[1:]

    def search(self, e: ir.Reachable, goal, n: int, st, env) -> bool:
        """Whether ``goal`` holds within ``n`` moves of ``e``'s actions from ``st``.  Every
        state the search settles is kept with its bound (a playout's next state, one move on,
        is usually among them)."""
        tag = (id(e), self._outer_values(e, env))
        hit = self.known.get((tag, st, n))
        if hit is not None:
            return hit
        if self.depth >= MAX_NESTING:
            raise EvalError(f"`reachable` searches nest more than {MAX_NESTING} deep (a move "
                            f"it searches asks for another search, and so on)", e.span)
        if len(self.known) > 1 << 17:
            self.known.clear()
        self.depth += 1
        try:
            return self._dfs(e, tag, goal, n, st, env)
        finally:
            self.depth -= 1

    def _outer_values(self, e: ir.Reachable, env) -> tuple:
        """The values of the locals around ``e`` that its goal reads (part of an answer's key)."""
        hit = self._outer.get(id(e))
        if hit is None or hit[0] is not e:
            reads, bound = fixinc.summary(e.goal, self._summaries)[:2]
            hit = self._outer[id(e)] = (e, tuple(sorted(reads - bound)))
        return tuple(env[s + 1] for s in hit[1])

    def _dfs(self, e: ir.Reachable, tag, goal, n: int, st, env) -> bool:
        names = set(e.actions)
        legal = self.game.legal
        known = self.known

        def rec(s, k: int) -> bool:
            key = (tag, s, k)
            hit = known.get(key)
            if hit is not None:
                return hit
            found = bool(goal(s, env))
            if not found and k > 0:
                found = any(rec(s2, k - 1) for _, s2, _ in legal(s, names, shown=False))
            known[key] = found
            return found
        return rec(st, n)


def searches_in(e) -> bool:
    """Whether expression ``e`` holds a `reachable`."""
    return any(isinstance(n, ir.Reachable) for n in nodes(e))


class _Known:
    """A stand-in for a z3 model that reads back only constants: each term is simplified,
    and one that is no value raises LookupError (`domains.concretize` asks it each leaf)."""

    @staticmethod
    def eval(v, model_completion: bool = True):
        s = z3.simplify(v)
        if z3.is_true(s) or z3.is_false(s) or z3.is_int_value(s):
            return s
        raise LookupError


def concrete_state(t: Type, v):
    """``v`` (a symbolic value of type ``t``: z3 terms at some leaves) as a plain value;
    LookupError when a leaf is not a known constant."""
    return dz.concretize(t, v, _Known)


def concrete_env(env: list) -> list:
    """The frame ``env`` with every known z3 constant read as a plain value; LookupError when
    a value holds an unknown (or is a symbolic sequence)."""
    def plain(v):
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, tuple):
            return tuple(plain(x) for x in v)
        if isinstance(v, z3.ExprRef):
            s = z3.simplify(v)
            if z3.is_true(s) or z3.is_false(s):
                return z3.is_true(s)
            if z3.is_int_value(s):
                return s.as_long()
        raise LookupError
    return [plain(v) for v in env]
