"""What the symbolic evaluator may abstract, as an object it carries: exact by default.

A prover that reads some parts of a step more coarsely (an `exists real` as an uninterpreted
predicate, a fixpoint as uninterpreted functions, a connected region as unknowns with facts)
implements this protocol and hands its object to the symbolic `Compiler` (`abstracted`) and to
its solvers (`symbolic.make_solver`); the engine asks it at each such place and never knows
what it does.  `EXACT` answers every question with "compute it": the evaluator's own terms.
"""
from __future__ import annotations


class Abstraction:
    """The exact reading: nothing abstracted.  Each hook returns None (or calls ``f``) for
    "evaluate as usual"."""

    @property
    def predicates(self) -> dict:
        """Uninterpreted predicates' names -> the z3 ids of terms (defined in an evaluator's
        `linear.Sides`) whose side conditions every query applying them gets (see
        `linear.side_conditions_real`)."""
        return {}

    def real_exists(self, e, st, env):
        """An `exists real` ``e`` over a symbolic state: None to decide it, or (a term, a z3
        Bool that is true when the term is to be decided as well)."""
        return None

    def real_decided(self, term, c, sides) -> None:
        """``term`` (from `real_exists`, its inputs concrete) is decided as ``c``; ``sides``
        (a `linear.Sides`) are the evaluator's, where a side condition of ``term`` goes."""

    def fixpoint(self, e, f, st, env):
        """The value of ``e``, an expression that computes a fixpoint, compiled as ``f``."""
        return f(st, env)

    def unrolled(self) -> None:
        """A symbolic fixpoint took one more step: an abstraction that keeps a time budget
        may stop the unrolling here by raising (what it raises is its own to catch)."""

    def approximations(self) -> int:
        """How many values it has read more coarsely than asked to, so far (a prover's
        fixpoint past its time budget): a path whose terms came with some is marked
        (`symbolic.Branch.approx`)."""
        return 0

    def region(self, ok: tuple, nb):
        """The unknowns of the connected regions of ``ok`` on the grid ``nb`` (an object with
        ``component(i)``, ``same(i, j)`` and ``count``), or None to flood."""
        return None

    def whole(self, terms):
        """A count over exactly a component's squares, as one term, or None."""
        return None

    def fold(self, kind: str, pairs, dflt: int):
        """A `max` or `min` (``kind``) of symbolic values over (guard, value) ``pairs`` (a
        guard may be False) as one term, ``dflt`` when no guard holds; or None."""
        return None

    def kept_paths(self) -> dict | None:
        """Where the action paths built under this reading are kept for whoever builds them
        again from the same state (a proof's inductive step, then its transition properties'
        pass), or None: not kept (this exact reading is shared, and keeps nothing)."""
        return None

    def side_conditions(self, solver, assumptions) -> list:
        """What a query on ``solver`` (with ``assumptions``) assumes of the abstraction's
        unknowns, besides the `exists real` side conditions."""
        return []


EXACT = Abstraction()
