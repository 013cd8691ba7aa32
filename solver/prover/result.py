"""What `prove` answers of each invariant: its status (inductive, holds up to a depth,
refuted with a trace, unknown), why, and how long it took."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Result:
    name: str
    kind: str                    # "invariant" | "transition"
    status: str                  # inductive | holds | refuted | unknown | undecided
    depth: int | None = None     # for "holds up to depth k" and refutations
    detail: str = ""
    trace: list = field(default_factory=list)
    seconds: float = 0.0
    stopped: str = ""            # why the proof stopped short of its end (time limit, Ctrl-C)

    def headline(self) -> str:
        match self.status:
            case "inductive":
                return "inductive (1-induction, jointly with the other inductive invariants)"
            case "holds":
                return f"holds up to depth {self.depth} (bounded model checking)"
            case "refuted":
                return f"refuted at depth {self.depth}"
            case "undecided":
                return "not decided"
        return "unknown"

    def as_json(self) -> dict:
        return {"invariant": self.name, "kind": self.kind, "status": self.status,
                "depth": self.depth, "summary": self.headline(), "detail": self.detail,
                "trace": self.trace, "seconds": round(self.seconds, 3),
                **({"stopped": self.stopped} if self.stopped else {})}


@dataclass
class Tally:
    """How far a proof is, for one stopped part-way: the pass it is in and, in the
    inductive step, the paths of this round checked so far out of those built, and the
    deepest bounded-model-checking depth completed (0: the initial state alone)."""

    stage: str = "base case"
    round: int = 1
    total: int = 0
    depth: int = 0
    # Path queries whose verdict came from the store or journal (a path counts once per
    # Houdini round and once in the transition properties' step), and action paths built.
    reused: int = 0
    built: int = 0
    # Once the step is done: the state invariants proved inductive together (the final
    # Houdini round's candidates, auxiliaries included) and the transition properties proved
    # from them, what a stored proof's seed is made of (`seed.seed_of`).
    inductive: tuple = ()
    transitions: tuple = ()
    # The passes of an automatic proof that ran (`tactics.ladder`), by name.
    passes: tuple = ()
    # The paths checked in this round so far, and in the whole run (a Dask worker's count
    # once its task's verdicts are back).
    done: int = 0
    checked: int = 0

    @property
    def paths(self) -> int:
        """The path queries answered so far: reused or checked."""
        return self.reused + self.checked

    def add(self, n: int = 1) -> None:
        """Count ``n`` more paths checked."""
        self.done += n
        self.settled(n)

    def settled(self, n: int) -> None:
        """Count ``n`` more path queries checked in the run (a path a symmetry settled
        too), not in this round's progress."""
        self.checked += n

    def count(self, paths: int, reused: int) -> None:
        """Count ``reused`` path queries answered by a previous run, and ``paths - reused``
        checked (all done)."""
        self.reused += reused
        self.settled(paths - reused)

    def paths_json(self) -> dict:
        return {"total": self.paths, "reused": self.reused, "checked": self.checked}

    def where(self) -> str:
        if self.stage == "induction" and not self.total:
            return f"during the inductive step (round {self.round}), building its action paths"
        if self.stage == "induction":
            return (f"during the inductive step (round {self.round}), after {self.done} of "
                    f"{self.total} action paths")
        return f"during {self.stage}"

