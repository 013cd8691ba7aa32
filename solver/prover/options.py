"""What a proof is asked to do: one frozen `ProveOptions` handed from `prove` down to each
pass, so that no pass reads a mode from anywhere else and a run is named by one value."""
from __future__ import annotations

from dataclasses import dataclass

# Long work says how far it is at least this often (s), and every 100 paths.
PROGRESS_S = 60.0
# How a candidate or a property that z3 gave up on is said to have fallen: not refuted, and
# a higher rung of an automatic proof may prove it (`tactics`).
GAVE_UP = "z3 gave up on the inductive step"
# Why a counterexample on a path built with a fixpoint read coarsely (past its unrolling's
# budget, `ProveOptions.fix_budget_ms`) is no verdict.
COARSE = "a fixpoint too slow to unroll read as uninterpreted functions"


def gave_up_why(action: str, timeout_ms: int, coarse: bool = False) -> str:
    """Why a path's verdict is none: z3 gave up within the step's time limit, or (``coarse``)
    the path read a fixpoint coarsely and found a counterexample that may not be one."""
    return (f"{GAVE_UP} (a path of {action}, "
            + (COARSE if coarse else f"{timeout_ms / 1000:g} s per query") + ")")


@dataclass(frozen=True)
class ProveOptions:
    """The options of `prove` (``rulebook prove``'s flags).  None of them changes a verdict
    but ``only``/``alone`` (which invariants), the time limits and the abstractions of the
    step (``exact_reals``, ``opaque_fix``, ``region_facts``), which decide what the step can
    prove; the others change only the time."""

    bmc_depth: int = 4
    """Bounded model checking's depth: the states reachable in at most that many moves."""
    timeout_ms: int = 120_000
    """The time limit of each bounded-model-checking query."""
    only: tuple[str, ...] | None = None
    """The invariants (a name or names) to prove and report, with the others as auxiliaries
    of the induction; None: all of them."""
    step_timeout_ms: int = 5_000
    """The time limit of each query of the inductive step: a query that times out leaves its
    invariant to bounded model checking, never "proved"."""
    split_lengths: bool = False
    """A step query z3 gives up on is checked again case by case over the lengths of the
    sequences the step changes (a count over a sequence an item was pushed onto): slower,
    and it proves more."""
    exact_reals: bool = False
    """The step decides each `exists real` exactly instead of reading it as an
    uninterpreted predicate of its inputs (see `abstractions.Opaque`)."""
    split_on: tuple[str, ...] = ()
    """State fields (bool, integer or enum) whose every value is a case of the step, that
    field concrete: a step that reads a constant table at such a field (a record's kind)
    then reads numbers."""
    journal: str | None = None
    """A file where each action path of the inductive step is recorded once checked; a run
    with the same spec, parameters and options skips the paths recorded there (see
    `journal.Journal`)."""
    store: str | None = None
    """An SQLite file that keeps the verdict of each path query of the step, keyed by what
    it reads (see `store.Store`): a re-proof checks only the paths an edit reached.  None:
    no store (the command line's default is the user's cache).  A journal, when given, is
    used instead."""
    opaque_fix: bool = False
    """The step reads each expression that computes a `fix` over symbolic inputs as
    uninterpreted functions of what it reads (see `abstractions.Opaque`): a step that floods
    a large board then builds, and what does not depend on the floods is proved; what does
    is left to bounded model checking, which computes the fixpoints."""
    fix_budget_ms: int | None = None
    """Without ``opaque_fix``: a fixpoint whose unrolling, in building a path of the step,
    takes longer than this is read from then on as with ``opaque_fix`` (the outermost `fix`
    being unrolled when the time ran out; see `abstractions.Opaque`); a path built so that
    breaks a candidate has z3 giving up on it (a verdict of the coarser reading is no
    counterexample), so the tactics' ladder goes on to its next pass.  None: every fixpoint
    is unrolled however long it takes.  The ladder's choice (`tactics.ladder`)."""
    alone: bool = False
    """With ``only``: the named invariants without the others, which must be inductive
    together, the step checking their conjuncts only (a step too costly for the whole set
    may not be for a part of it)."""
    region_facts: bool = False
    """The region builtins are unknowns with the facts of connected regions
    (solver/prover/regionfacts.py), the other fixpoints uninterpreted as with
    ``opaque_fix``."""
    symmetric: bool = False
    """A path that is the image of an earlier one under a symmetry of the board is not
    proved when z3 shows that it follows from that one mirrored (see
    solver/prover/symmetry.py); the verdicts are the same, only the time changes."""

    time_limit_s: float | None = None
    """Seconds the whole proof may take: bounded model checking then comes first, a depth at
    a time, and past the limit `TimeUp` is raised (see `prove`).  It decides only how far
    the proof gets, never a verdict."""
    auto: bool = False
    """The prover picks its tactics (`tactics.ladder`): passes over the step under each of
    its abstractions the rules call for, the next only where z3 gave up on the previous,
    each reusing the actions the previous proved.  The command line's default when no
    tactic flag is given; the tactic options above are then the ladder's, not the
    caller's."""
    keep_partial: bool = False
    """A Ctrl-C or the time limit ends the proof with what it established, each result
    saying where it stopped, instead of propagating (the command line's choice; a script
    that stores results wants the exception)."""

    def __post_init__(self):
        # A name alone is the one invariant; a list (argparse's) is read as a tuple, so that
        # the options stay hashable and compare equal however they were written.
        if isinstance(self.only, str):
            object.__setattr__(self, "only", (self.only,))
        elif self.only is not None:
            object.__setattr__(self, "only", tuple(self.only))
        object.__setattr__(self, "split_on", tuple(self.split_on))

    @property
    def opaque_fixpoints(self) -> bool:
        """Whether the step reads fixpoints as uninterpreted functions: asked for, or with
        the region facts (which read only the region builtins otherwise)."""
        return self.opaque_fix or self.region_facts


def under(options: ProveOptions) -> list[bool]:
    """The abstraction of the step ``options`` make: [exact reals, fixpoints read as
    uninterpreted functions, the facts of connected regions]."""
    return [options.exact_reals, options.opaque_fixpoints, options.region_facts]
