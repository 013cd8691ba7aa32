"""The checked intermediate representation: frozen data, tuple children, a type and a span on
every expression.  No behaviour lives here; `evaluate` compiles it, `check` produces it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from .errors import Span
from .types import Type


# ---- expressions -------------------------------------------------------------------------

@dataclass(frozen=True)
class Const:
    type: Type
    span: Span
    value: object


@dataclass(frozen=True)
class Local:
    """A variable of the current frame: a parameter, a `let`, a quantifier binder."""

    type: Type
    span: Span
    name: str
    slot: int


@dataclass(frozen=True)
class StateRef:
    """The current state (a record); `old` marks the previous state in a transition property."""

    type: Type
    span: Span
    old: bool = False


@dataclass(frozen=True)
class Field:
    type: Type
    span: Span
    record: "Expr"
    index: int
    name: str


@dataclass(frozen=True)
class Index:
    """``m[k]`` on a map (value), bag (count), set (membership) or seq (element ``k``)."""

    type: Type
    span: Span
    coll: "Expr"
    key: "Expr"


@dataclass(frozen=True)
class Unary:
    type: Type
    span: Span
    op: str  # 'not' | 'neg'
    arg: "Expr"


@dataclass(frozen=True)
class Binary:
    """Arithmetic, comparison and logic.  Bag operands: + - <= == elementwise."""

    type: Type
    span: Span
    op: str  # + - * / % == != < <= > >= and or
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class Ite:
    type: Type
    span: Span
    cond: "Expr"
    then: "Expr"
    other: "Expr"


@dataclass(frozen=True)
class Let:
    type: Type
    span: Span
    slot: int
    value: "Expr"
    body: "Expr"


@dataclass(frozen=True)
class Call:
    """A call of a `def`: the arguments go to ``slots`` of the caller's frame, then ``body``
    (checked for this call site) is evaluated there.  Defs cannot recurse, so this terminates."""

    type: Type
    span: Span
    name: str
    args: tuple["Expr", ...]
    slots: tuple[int, ...]
    body: "Expr"
    check: Type | None = None  # the declared result type, when the body's is not within it


@dataclass(frozen=True)
class Builtin:
    """len top bottom push pop size bag_of abs min2 max2 drop_bottom push_bottom has ..."""

    type: Type
    span: Span
    name: str
    args: tuple["Expr", ...]


@dataclass(frozen=True)
class Member:
    type: Type
    span: Span
    elem: "Expr"
    coll: "Expr"


@dataclass(frozen=True)
class RecordLit:
    type: Type
    span: Span
    items: tuple["Expr", ...]


@dataclass(frozen=True)
class SeqLit:
    type: Type
    span: Span
    items: tuple["Expr", ...]


@dataclass(frozen=True)
class BagLit:
    """A bag or set literal: ``type`` tells which."""

    type: Type
    span: Span
    items: tuple["Expr", ...]


@dataclass(frozen=True)
class With:
    type: Type
    span: Span
    record: "Expr"
    updates: tuple[tuple[int, "Expr"], ...]


@dataclass(frozen=True)
class Quant:
    """forall / exists / sum / count / max / min over a finite domain, with an optional filter."""

    type: Type
    span: Span
    kind: str
    slot: int
    domain: "Domain"
    where: "Expr | None"
    body: "Expr"


@dataclass(frozen=True)
class Reachable:
    """``reachable [from { setup }] using a, b within N: goal``: some sequence of at most N
    moves of actions ``a``, ``b`` (each legal where it is made; none at all too) leads from the
    current state, or the state ``setup`` makes of it, to a state where ``goal`` holds.
    ``within`` is evaluated in that first state; ``state`` is the current state, read whole by
    the search (so that the analyses of what an expression reads see it)."""

    type: Type
    span: Span
    actions: tuple[str, ...]
    within: "Expr"
    goal: "Expr"
    state: StateRef
    setup: tuple["Stmt", ...] = ()


@dataclass(frozen=True)
class Fix:
    """``fix r = seed within N: step``: r0 = seed, r(i+1) = step with r = r(i); the value is the
    first r(i) equal to r(i+1), or r(N).  ``r`` lives in ``slot``."""

    type: Type
    span: Span
    slot: int
    seed: "Expr"
    bound: int
    step: "Expr"


@dataclass(frozen=True)
class RealVar:
    """``f[k]``: the real unknown of key ``k`` of the `exists real` whose family is in ``slot``
    (0 when ``k`` fails the family's `where`).  Only `linear.py` compiles it."""

    type: Type
    span: Span
    slot: int
    key: "Expr"
    name: str = ""          # the family's name, for the documentation


@dataclass(frozen=True)
class RealExists:
    """``exists real f[k in K where g]: body``: are there reals ``f[k]`` (one per ``k`` of the
    finite type ``K`` with ``g``) satisfying the conjunction of linear comparisons ``body``?"""

    type: Type
    span: Span
    name: str
    slot: int               # the binder ``k`` (while the `where` is evaluated)
    family: int             # the slot that names the family inside ``body``
    domain: "Domain"
    where: "Expr | None"
    body: "Expr"


@dataclass(frozen=True)
class ItemGroup:
    """Items of a `largest`: ``times[i]`` copies (one when None) of ``values[i]``, once when
    ``domain`` is None, else for each value of the binder (in ``slot``) that passes ``where``."""

    type: Type
    span: Span
    slot: int
    domain: "Domain | None"
    where: "Expr | None"
    values: tuple["Expr", ...]
    times: tuple["Expr | None", ...]


@dataclass(frozen=True)
class Largest:
    """``largest k of { groups }``: the sum of the ``k`` largest items worth more than 0 (all
    of them when there are fewer): the most that k picks among the items can add."""

    type: Type
    span: Span
    count: "Expr"
    groups: tuple[ItemGroup, ...]


@dataclass(frozen=True)
class Text:
    type: Type
    span: Span
    value: str


Expr: TypeAlias = (Const | Local | StateRef | Field | Index | Unary | Binary | Ite | Let | Call
                   | Builtin | Member | RecordLit | SeqLit | BagLit | With | Quant | Fix | Text
                   | RealVar | RealExists | Largest | Reachable)


# ---- domains of binders -------------------------------------------------------------------

@dataclass(frozen=True)
class TypeDomain:
    """Every value of a finite type."""

    elem: Type
    span: Span


@dataclass(frozen=True)
class RangeDomain:
    elem: Type
    span: Span
    lo: Expr
    hi: Expr


@dataclass(frozen=True)
class CollDomain:
    """The distinct elements of a seq, bag or set (or the keys of a map)."""

    elem: Type
    span: Span
    coll: Expr


@dataclass(frozen=True)
class SubbagDomain:
    """Every sub-bag of a bag (for `choose` in puzzles)."""

    elem: Type
    span: Span
    coll: Expr


Domain: TypeAlias = TypeDomain | RangeDomain | CollDomain | SubbagDomain


# ---- statements ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Requires:
    span: Span
    name: str
    message: str
    cond: Expr


@dataclass(frozen=True)
class LetStmt:
    span: Span
    slot: int
    value: Expr


@dataclass(frozen=True)
class PathField:
    index: int
    type: Type


@dataclass(frozen=True)
class PathIndex:
    key: Expr
    type: Type  # the type of the collection being indexed


@dataclass(frozen=True)
class Assign:
    """``field.path = value``; bounds that the checker could not prove become a named guard."""

    span: Span
    target: str
    path: tuple[PathField | PathIndex, ...]
    value: Expr
    bounds: Type | None  # the stored value must fit this type: an implicit `requires bounds`
    source: Type | None = None  # the value's static type: only what it does not prove is checked


@dataclass(frozen=True)
class IfStmt:
    span: Span
    cond: Expr
    then: tuple["Stmt", ...]
    other: tuple["Stmt", ...]


@dataclass(frozen=True)
class Show:
    span: Span
    items: tuple[Expr, ...]
    # `show ... via r`: the squares the move passes through (a set or a map to bool), for
    # pictures only; evaluated only when a picture asks (`Game.move_via`).
    via: Expr | None = None


Stmt: TypeAlias = Requires | LetStmt | Assign | IfStmt | Show


# ---- declarations -------------------------------------------------------------------------

@dataclass(frozen=True)
class Doc:
    text: str = ""
    ref: str = ""


@dataclass(frozen=True)
class Param:
    name: str
    type: Type
    default: object
    doc: Doc
    span: Span


@dataclass(frozen=True)
class ReadingDecl:
    name: str
    options: tuple[tuple[str, str], ...]  # (option, description)
    default: str
    chosen: str
    doc: Doc
    span: Span


@dataclass(frozen=True)
class StateFieldDecl:
    name: str
    type: Type
    doc: Doc
    span: Span
    internal: bool = False      # bookkeeping, not part of the position: not drawn


@dataclass(frozen=True)
class Binder:
    name: str
    slot: int
    domain: Domain


@dataclass(frozen=True)
class Action:
    name: str
    chance: bool
    params: tuple[Binder, ...]
    weight: Expr | None
    body: tuple[Stmt, ...]
    frame: int
    doc: Doc
    span: Span
    source: str  # the formal text, for the documentation


@dataclass(frozen=True)
class DefDecl:
    name: str
    params: tuple[tuple[str, Type], ...]
    type: Type
    body: Expr
    frame: int
    doc: Doc
    span: Span
    source: str


@dataclass(frozen=True)
class Invariant:
    name: str
    expr: Expr
    frame: int
    transition: bool
    doc: Doc
    span: Span
    source: str


@dataclass(frozen=True)
class ActionCall:
    name: str
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True)
class Expect:
    kind: str  # 'value' | 'legal' | 'illegal'
    expr: Expr | None
    call: ActionCall | None
    because: str | None
    span: Span
    source: str


@dataclass(frozen=True)
class Example:
    name: str
    setup: tuple[Stmt, ...]
    script: tuple[ActionCall | Expect, ...]  # actions and expectations, in order
    frame: int
    params: tuple[tuple[str, int], ...]
    doc: Doc
    span: Span
    readings: tuple[tuple[str, str], ...] = ()   # `with reading = option`


@dataclass(frozen=True)
class Check:
    """A named condition on puzzle inputs; a failure is reported against the input."""

    name: str
    message: str
    expr: Expr
    span: Span


@dataclass(frozen=True)
class PuzzleInput:
    name: str
    type: Type
    default: Expr | None
    optional: bool
    is_param: bool
    slot: int
    checks: tuple[Check, ...]
    span: Span


@dataclass(frozen=True)
class Query:
    when: str | None
    choose: Binder | None
    setup: tuple[Stmt, ...]
    goal: Expr
    maximize: Expr | None
    within: Expr
    answers: tuple[tuple[str, str], ...]  # (json key, found|steps|best|legal|illegal)
    using: tuple[str, ...]  # the actions a solution may use (all when empty)
    span: Span
    # An upper bound of the objective over every run from a state (branch and bound).
    bound: Expr | None = None
    # `using move(piece, _)`: per action so written, the value each argument must equal
    # (None: any), evaluated on the query's start.
    pins: tuple[tuple[str, tuple[Expr | None, ...]], ...] = ()


@dataclass(frozen=True)
class Puzzle:
    name: str
    inputs: tuple[PuzzleInput, ...]
    checks: tuple[Check, ...]
    queries: tuple[Query, ...]
    frame: int
    doc: Doc
    span: Span


@dataclass(frozen=True)
class Rotate:
    """`rotate Player(piece): f, g;`: the players (the integers 0..n-1 of ``player``) may be
    numbered from any one of them: player p's part of the state (the fields ``fields``, each
    a player or a table keyed by players) becomes player p + r's, mod n, and piece(p)
    (``piece``'s value for p, one of the enum's) becomes piece(p + r) wherever the enum is in
    the state.  A hint for `rulebook prove --symmetry`, which checks each use."""
    player: str
    n: int
    enum: str
    piece: str              # the def: a player's piece, a value of the enum
    fields: tuple[str, ...]
    span: Span


@dataclass(frozen=True)
class Program:
    """A checked game: one spec file plus the files it extends, under chosen params/readings."""

    name: str
    title: str
    files: tuple[str, ...]
    params: tuple[Param, ...]
    param_values: dict
    readings: tuple[ReadingDecl, ...]
    types: dict
    state: tuple[StateFieldDecl, ...]
    state_type: Type
    init: tuple[Stmt, ...]
    init_frame: int
    actions: tuple[Action, ...]
    defs: dict
    invariants: tuple[Invariant, ...]
    examples: tuple[Example, ...]
    puzzles: tuple[Puzzle, ...]
    terminal: Expr | None
    actor: Expr | None
    docs: dict = field(default_factory=dict)
    rotate: "Rotate | None" = None
    terminal_frame: int = 0     # the local slots `terminal` needs (its lets, inlined calls)
    actor_frame: int = 0
