"""A digest of the checked, lowered IR: what a proof (or an ambiguity witness) really depends
on, not the text it was written in.

`ir_digest` hashes a canonical serialization of the parts of an `ir.Program` it is given,
Merkle-style (each node's digest from its kind, its fields and its children's digests).  Left
out: spans, doc strings, the formal text kept for the documentation, the names of locals (a
local is its frame slot), the messages of `requires`, the `via` of a `show` and the `internal`
marker.  Kept: every constant and its type, every bound, operator, builtin, slot, field index,
state field, rule name and action name.  Constant conditions are folded before hashing, as the
evaluator would decide them (``a == b`` of two constants, ``not`` of one, ``and``/``or`` with
a constant left operand or a ``true`` right one, an ``if`` or ``?:`` on a constant, a
``requires`` of ``true``): a reading whose chosen option lowers to the old rules leaves the
digest as it was.  An opaque abstraction of the prover tells a `fix` or an `exists real` by
where it was written: the digest keeps which of them share a place (numbered in the order the
traversal meets them), not the place itself.

An action is hashed by `SlotCanon`: its frame slots named in the order the folded traversal
meets them, and its frame's size left out.  The checker gives every `let` and inlined call of
an action a slot of its frame, those of a branch that a reading folds away too, so an edit
there (a call added to a def that only another reading's branch calls) renumbered the slots
of the live code after it and changed the digest of a program that a proof under this
reading read unchanged.  The action parts of `part_digests` and `proof_parts` are so
hashed; ``legacy`` gives them as they were hashed before (slots by number, the frame's size),
which `docs/refresh.py --restamp` reads once to carry the stored proofs over.

Deterministic across processes: no `id()` or `hash()` reaches the output (an ``id`` only keys a
memo while the nodes are alive)."""
from __future__ import annotations

import dataclasses
import hashlib
import json

from . import ir
from .types import BoolT, EnumT, IntT

# Fields left out of every node, and of some kinds of node.
_SKIP = frozenset({"span", "doc"})
_SKIP_OF = {
    ir.Local: frozenset({"name"}),
    ir.Binder: frozenset({"name"}),
    ir.RealVar: frozenset({"name"}),
    ir.RealExists: frozenset({"name"}),
    ir.Requires: frozenset({"message"}),
    ir.Show: frozenset({"via"}),
    ir.StateFieldDecl: frozenset({"internal"}),
    ir.Action: frozenset({"source"}),
    ir.DefDecl: frozenset({"source"}),
    ir.Invariant: frozenset({"source"}),
}
# Nodes an abstraction of the prover tells apart by the place they were written.
_PLACED = (ir.Fix, ir.RealExists)
_STMTS = (ir.Requires, ir.LetStmt, ir.Assign, ir.IfStmt, ir.Show)
_NOT_CONST = object()


class IRHasher:
    """One digest computation: memos by node identity (the nodes are kept alive with them)
    and the numbering of the places of `fix` and `exists real` nodes met so far."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[object, str, object]] = {}
        self._places: dict[tuple, int] = {}
        self.searched: set[str] = set()    # the actions of the `reachable`s hashed (live ones)

    # ---- values and types ---------------------------------------------------------------

    def value(self, v) -> str:
        if v is None:
            return "N"
        if isinstance(v, bool):
            return "T" if v else "F"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, tuple):
            return "(" + ",".join(self.encode(x) for x in v) + ")"
        if isinstance(v, (frozenset, set)):
            return "{" + ",".join(sorted(self.encode(x) for x in v)) + "}"
        if isinstance(v, dict):
            return "{" + ",".join(sorted(f"{self.value(k)}:{self.encode(x)}"
                                         for k, x in v.items())) + "}"
        raise TypeError(f"no canonical form for a {type(v).__name__} in the IR")

    def encode(self, v) -> str:
        """A field's canonical text: a node's or a type's digest, a value's spelling."""
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return self.node(v)[0]
        if isinstance(v, tuple) and any(isinstance(x, _STMTS) for x in v):
            return "[" + ",".join(self.node(s)[0] for s in self.stmts(v)) + "]"
        return self.value(v)

    # ---- nodes ----------------------------------------------------------------------------

    def node(self, n) -> tuple[str, object]:
        """The digest of a node (an IR node or a type) and its folded constant value
        (`_NOT_CONST` when it has none)."""
        hit = self._memo.get(id(n))
        if hit is not None and hit[0] is n:
            return hit[1], hit[2]
        folded = self._fold(n)
        if folded is not None:
            digest, const = folded
        else:
            const = n.value if isinstance(n, ir.Const) else _NOT_CONST
            digest = self._structural(n)
        self._memo[id(n)] = (n, digest, const)
        return digest, const

    def _structural(self, n) -> str:
        cls = type(n)
        skip = _SKIP | _SKIP_OF.get(cls, frozenset())
        parts = [f"{f.name}={self.field(n, f.name, getattr(n, f.name))}"
                 for f in dataclasses.fields(n) if f.name not in skip]
        if isinstance(n, ir.Reachable):
            self.searched.update(n.actions)
        if isinstance(n, _PLACED):
            sp = n.span
            where = (sp.file, sp.line, sp.col) if sp is not None else None
            parts.append(f"place={self._places.setdefault(where, len(self._places))}")
        return _sha(f"{cls.__name__}({';'.join(parts)})")

    def field(self, n, name: str, v) -> str:
        """The canonical text of field ``name`` of node ``n`` (a hook: `irshape` renames the
        frame slots)."""
        return self.encode(v)

    def _const(self, cls_type, v) -> tuple[str, object]:
        return _sha(f"Const(type={self.encode(cls_type)};value={self.value(v)})"), v

    def _fold(self, n):
        """The digest and value of ``n`` when it is decided by constants, else None."""
        match n:
            case ir.Unary(op="not", arg=a):
                c = self.node(a)[1]
                if isinstance(c, bool):
                    return self._const(BoolT(), not c)
            case ir.Binary(op=("==" | "!=") as op, left=a, right=b):
                ca, cb = self.node(a)[1], self.node(b)[1]
                if _scalar(a, ca) and _scalar(b, cb):
                    return self._const(BoolT(), (ca == cb) == (op == "=="))
            case ir.Binary(op=("and" | "or") as op, left=a, right=b):
                ca = self.node(a)[1]
                if isinstance(ca, bool):
                    decided = (op == "and") != ca     # false and _, true or _
                    return self._const(BoolT(), ca) if decided else self.node(b)
                if op == "and" and self.node(b)[1] is True:
                    return self.node(a)
            case ir.Ite(cond=c, then=t, other=o):
                cc = self.node(c)[1]
                if isinstance(cc, bool):
                    return self.node(t if cc else o)
        return None

    def stmts(self, body) -> list:
        """The statements of ``body`` as the evaluator runs them: an `if` on a constant
        replaced by its branch, a `requires` of ``true`` left out."""
        out = []
        for s in body:
            if isinstance(s, ir.IfStmt):
                c = self.node(s.cond)[1]
                if isinstance(c, bool):
                    out.extend(self.stmts(s.then if c else s.other))
                    continue
            if isinstance(s, ir.Requires) and self.node(s.cond)[1] is True:
                continue
            out.append(s)
        return out


# The fields of a node that hold frame slots (a `Local` and a `RealVar` read theirs, every other
# node binds it), and those that only size a frame.
SLOT_FIELDS = ("slot", "family")
READS = (ir.Local, ir.RealVar)
_FRAME_FIELDS = frozenset({"frame", "init_frame", "terminal_frame", "actor_frame"})


class SlotCanon(IRHasher):
    """An `IRHasher` that names frame slots by the order the traversal meets them (constant
    conditions folded, so a branch folded away takes none) and leaves out the sizes of
    frames (``frames``, the fields that hold them): two parts that compute the same with
    their slots numbered otherwise have the same digest."""

    frames = _FRAME_FIELDS

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[int, str] = {}

    def slot(self, raw: int, bind: bool) -> str:
        name = self.names.get(raw)
        if name is None:
            name = self.names[raw] = f"s{len(self.names)}"
        return name

    def field(self, n, name: str, v) -> str:
        if name in SLOT_FIELDS and isinstance(v, int) and not isinstance(v, bool):
            return self.slot(v, bind=not isinstance(n, READS))
        if name == "slots" and isinstance(v, tuple):
            return "(" + ",".join(self.slot(x, True) for x in v) + ")"
        if name in self.frames:
            return "-"
        return self.encode(v)


def _scalar(e, c) -> bool:
    return c is not _NOT_CONST and isinstance(c, (bool, int)) \
        and isinstance(e.type, (BoolT, IntT, EnumT))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ir_digest(parts: list[tuple[str, object]]) -> str:
    """The digest of named parts (IR nodes, types, tuples of them, plain values), in the
    order given; 16 hex digits like the other digests."""
    h = IRHasher()
    return _sha("\n".join(f"{name}:{h.encode(v)}" for name, v in parts))[:16]


def rules_parts(p: ir.Program) -> list[tuple[str, object]]:
    """What a move depends on: the state, its start, the actions, whose turn it is and when
    the game ends (the defs they reach are inlined in them)."""
    return [("state", tuple((f.name, f.type) for f in p.state)),
            ("state_type", p.state_type),
            ("init", (p.init_frame, p.init)),
            ("actions", p.actions),
            ("actor", p.actor),
            ("terminal", p.terminal)]


def proof_parts(p: ir.Program, invariants=None, legacy: bool = False) \
        -> list[tuple[str, object]]:
    """What a proof depends on: the rules, and the invariants and transitions it read (all,
    or those named), by name; each action by its digest under `SlotCanon` (unless
    ``legacy``)."""
    named = None if invariants is None else set(invariants)
    invs = tuple(sorted((i for i in p.invariants if named is None or i.name in named),
                        key=lambda i: i.name))
    rules = rules_parts(p)
    if not legacy:
        rules = [(k, tuple(_canon(a) for a in v) if k == "actions" else v) for k, v in rules]
    return rules + [("invariants", invs)]


def _canon(a: ir.Action) -> str:
    return SlotCanon().encode(a)


def _action_digest(a: ir.Action, by_name: dict, legacy: bool = False) -> str:
    """An action's part digest: its IR, and, when it searches others (a `reachable` that
    constant conditions leave in), theirs and those they search, by name."""
    make = IRHasher if legacy else SlotCanon
    h = make()
    text = f"action:{h.encode(a)}"
    searched: dict[str, str] = {}           # name -> its digest, each hashed alone
    todo = set(h.searched)
    while todo:
        name = todo.pop()
        other = make()
        searched[name] = other.encode(by_name[name])
        todo |= other.searched - searched.keys()
    if searched:
        text += "\nsearches:" + (
            h.encode(tuple(by_name[n] for n in sorted(searched))) if legacy
            else ",".join(searched[n] for n in sorted(searched)))
    return _sha(text)[:16]


def part_digests(p: ir.Program, legacy: bool = False) -> dict[str, str]:
    """The digest of each part of a program a proof's query may read, by part: ``state``,
    ``init``, ``actor``, ``terminal``, ``action:NAME`` (with the defs it reaches) and
    ``invariant:NAME``; an action that searches others (`reachable`) with theirs.  Each part
    is hashed alone (its places numbered within it; an action's slots too, by `SlotCanon`,
    unless ``legacy``), so an edit changes the digests of the parts it reaches and no other:
    the first piece of a key per action path."""
    out = {"state": ir_digest([("state", tuple((f.name, f.type) for f in p.state)),
                               ("state_type", p.state_type)]),
           "init": ir_digest([("init", (p.init_frame, p.init))]),
           "actor": ir_digest([("actor", p.actor)]),
           "terminal": ir_digest([("terminal", p.terminal)])}
    by_name = {a.name: a for a in p.actions}
    for a in p.actions:
        out[f"action:{a.name}"] = _action_digest(a, by_name, legacy)
    for i in p.invariants:
        out[f"invariant:{i.name}"] = ir_digest([("invariant", i)])
    return out
