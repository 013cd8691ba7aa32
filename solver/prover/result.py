"""What `prove` answers of each invariant: its status (inductive, holds up to a depth,
refuted with a trace, unknown), why, and how long it took."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Result:
    name: str
    kind: str                    # "invariant" | "transition"
    status: str                  # inductive | holds | refuted | unknown
    depth: int | None = None     # for "holds up to depth k" and refutations
    detail: str = ""
    trace: list = field(default_factory=list)
    seconds: float = 0.0

    def headline(self) -> str:
        match self.status:
            case "inductive":
                return "inductive (1-induction, jointly with the other inductive invariants)"
            case "holds":
                return f"holds up to depth {self.depth} (bounded model checking)"
            case "refuted":
                return f"refuted at depth {self.depth}"
        return "unknown"

    def as_json(self) -> dict:
        return {"invariant": self.name, "kind": self.kind, "status": self.status,
                "depth": self.depth, "summary": self.headline(), "detail": self.detail,
                "trace": self.trace, "seconds": round(self.seconds, 3)}

