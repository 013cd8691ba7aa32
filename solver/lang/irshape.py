"""Whether an edited action only asks more than a proved one (`strengthens`), from the two
actions' `shape`s.

An invariant preserved by every move of an action is preserved by every move of an action that
allows fewer of the same moves.  The common edit of that kind is a `requires` made stricter, or
a new one: then a stored proof of the old action stands for the new one, and the prover need not
check its paths again.  A shape is what is needed to tell that from the stored proof alone:

- ``relaxed``: the digest of the action with its `requires` left out, and the `let`s that only
  they read, the frame slots named in the order they are met (a `let` fewer does not shift
  them).  Two actions of the same relaxed digest run the same statements on the same state.
- ``requires``: each condition's place among the other statements (so that it is compared with
  conditions asked of the same state) and its skeleton: its ``and``, ``or``, ``not``,
  quantifiers and ``let``s, every other subexpression an atom named by its digest (a local of a
  left-out `let` by that `let`'s place and value); one line each, ``PLACE SKELETON``, the
  skeleton an s-expression (`_text`).

``strengthens(new, old)``: the relaxed digests are equal and, at each place, the conditions of
``new`` imply each condition of ``old`` by the skeletons alone (`implies`: a conjunction implies
each conjunct, a disjunct its disjunction, under the same quantifier or `let`).  The rules are
few and sound: an implication they miss only costs a re-check.  Shapes are plain JSON, kept by
the proof store beside the verdicts."""
from __future__ import annotations

import hashlib
import json

from . import ir
from .irdigest import READS, IRHasher, SlotCanon
from .irwalk import nodes


class _Canon(SlotCanon):
    """A `SlotCanon` whose ``names`` are this scope's, ``outer`` the enclosing scope's (read
    only), ``dead`` the tokens of the left-out `let`s' slots; it keeps the frames' sizes (the
    shapes stored in seeds were made so)."""

    frames = frozenset()

    def __init__(self, prefix: str, outer: dict | None = None, dead: dict | None = None):
        super().__init__()
        self.prefix = prefix
        self.outer = outer or {}
        self.dead = dead or {}

    def slot(self, raw: int, bind: bool) -> str:
        if raw in self.names:
            return self.names[raw]
        if not bind:
            if raw in self.outer:
                return self.outer[raw]
            if raw in self.dead:
                return self.dead[raw]
        name = f"{self.prefix}{len(self.names)}"
        self.names[raw] = name
        return name


def _is_true(cond) -> bool:
    return IRHasher().node(cond)[1] is True


def _const(cond):
    c = IRHasher().node(cond)[1]
    return c if isinstance(c, bool) else None


def _live_slots(action: ir.Action) -> set[int]:
    """The slots read anywhere but in a `requires`'s condition; and those a `let` binds
    twice (kept, not left out)."""
    live: set[int] = set()
    lets: dict[int, int] = {}

    def reads(x) -> None:
        live.update(n.slot for n in nodes(x) if isinstance(n, READS))

    def block(body) -> None:
        for s in body:
            match s:
                case ir.Requires():
                    pass
                case ir.IfStmt(cond=c, then=t, other=o):
                    reads(c)
                    block(t)
                    block(o)
                case ir.LetStmt(slot=slot, value=v):
                    lets[slot] = lets.get(slot, 0) + 1
                    reads(v)
                case _:
                    reads(s)
    if action.weight is not None:
        reads(action.weight)
    block(action.body)
    return live | {s for s, k in lets.items() if k > 1}


def shape(action: ir.Action) -> dict:
    """The shape of ``action`` (see the module's doc): ``{"relaxed": digest, "requires":
    [[place, skeleton], ...]}``, JSON."""
    live = _live_slots(action)
    h = _Canon("s")
    reqs: list[tuple[str, ir.Requires]] = []
    dead: list[tuple[str, ir.LetStmt]] = []

    def block(body, where: str) -> str:
        out: list[str] = []
        for s in body:
            place = f"{where}{len(out)}"
            if isinstance(s, ir.IfStmt) and (c := _const(s.cond)) is not None:
                # As the evaluator runs it: the branch a constant condition picks, in place.
                inner = block(s.then if c else s.other, f"{place}c")
                out.append(inner)
                continue
            if isinstance(s, ir.Requires):
                if not _is_true(s.cond):
                    reqs.append((place, s))
                continue
            if isinstance(s, ir.LetStmt) and s.slot not in live:
                dead.append((place, s))
                continue
            if isinstance(s, ir.IfStmt):
                out.append(f"If({h.node(s.cond)[0]};{block(s.then, place + 't')};"
                           f"{block(s.other, place + 'o')})")
            else:
                out.append(h.node(s)[0])
        return "[" + ",".join(out) + "]"

    params = [h.node(b)[0] for b in action.params]
    weight = None if action.weight is None else h.node(action.weight)[0]
    body = block(action.body, "")
    tokens = {s.slot: f"let@{place}:{h.node(s.value)[0]}" for place, s in dead}
    relaxed = _sha(json.dumps([action.name, action.chance, params, weight, body]))[:16]
    return {"relaxed": relaxed,
            "requires": [f"{place} {_text(_skeleton(r.cond, _Canon('c', h.names, tokens)))}"
                         for place, r in reqs]}


def _text(sk: list) -> str:
    """A skeleton as a line: an atom its digest, a node ``(kind part ...)``, a missing
    `where` ``-``."""
    if sk[0] == "atom":
        return sk[1]
    if sk[0] in ("and", "or"):
        return f"({sk[0]} {' '.join(map(_text, sk[1]))})".replace(" )", ")")
    if sk[0] == "not":
        return f"(not {_text(sk[1])})"
    if sk[0] == "let":
        return f"(let {sk[1]} {sk[2]} {_text(sk[3])})"
    return f"({sk[0]} {sk[1]} {sk[2]} {sk[3] or '-'} {_text(sk[4])})"


def _parse(text: str) -> list:
    """The skeleton of a line of `_text`; ValueError when it is none."""
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    at = 0

    def one() -> list:
        nonlocal at
        if at >= len(tokens) or tokens[at] == ")":
            raise ValueError("not a skeleton")
        t = tokens[at]
        at += 1
        if t != "(":
            return ["atom", t]
        kind = tokens[at]
        at += 1
        if kind in ("and", "or"):
            parts = []
            while at < len(tokens) and tokens[at] != ")":
                parts.append(one())
            sk = [kind, parts]
        elif kind == "not":
            sk = ["not", one()]
        elif kind == "let":
            sk = ["let", tokens[at], tokens[at + 1]]
            at += 2
            sk.append(one())
        elif kind in ("exists", "forall"):
            w = tokens[at + 2]
            sk = [kind, tokens[at], tokens[at + 1], None if w == "-" else w]
            at += 3
            sk.append(one())
        else:
            raise ValueError(f"not a skeleton: {kind}")
        if at >= len(tokens) or tokens[at] != ")":
            raise ValueError("not a skeleton")
        at += 1
        return sk
    sk = one()
    if at != len(tokens):
        raise ValueError("not a skeleton")
    return sk


def _skeleton(e, h: _Canon) -> list:
    """The skeleton of ``e``, folded as its digest is (`IRHasher`): a condition that
    constants decide is an atom, a connective that a constant operand decides is the other
    operand's skeleton, so that one digest has one shape."""
    if isinstance(h.node(e)[1], bool):
        return ["atom", _short(h, e)]
    match e:
        case ir.Binary(op=("and" | "or"), left=a, right=b) \
                if isinstance(h.node(a)[1], bool):
            return _skeleton(b, h)          # `true and b`, `false or b`
        case ir.Binary(op="and", left=a, right=b) if h.node(b)[1] is True:
            return _skeleton(a, h)
        case ir.Ite(cond=c, then=t, other=o) if isinstance(h.node(c)[1], bool):
            return _skeleton(t if h.node(c)[1] else o, h)
        case ir.Binary(op=("and" | "or") as op, left=a, right=b):
            parts = []
            for x in (_skeleton(a, h), _skeleton(b, h)):
                parts.extend(x[1] if x[0] == op else [x])
            return [op, parts]
        case ir.Unary(op="not", arg=a):
            return ["not", _skeleton(a, h)]
        case ir.Quant(kind=("exists" | "forall") as kind, slot=slot, domain=d, where=w,
                      body=b):
            name = h.slot(slot, True)
            return [kind, name, _short(h, d), None if w is None else _short(h, w),
                    _skeleton(b, h)]
        case ir.Let(slot=slot, value=v, body=b):
            name = h.slot(slot, True)
            return ["let", name, _short(h, v), _skeleton(b, h)]
    return ["atom", _short(h, e)]


def _short(h: _Canon, e) -> str:
    return h.node(e)[0][:16]


def implies(n: list, o: list) -> bool:
    """Whether skeleton ``n`` implies skeleton ``o`` by the rules of the module's doc."""
    if n == o:
        return True
    if o[0] == "and":
        return all(implies(n, x) for x in o[1])
    if n[0] == "or":
        return all(implies(x, o) for x in n[1])
    if n[0] == "and" and any(implies(x, o) for x in n[1]):
        return True
    if o[0] == "or" and any(implies(n, x) for x in o[1]):
        return True
    if n[0] == o[0] == "not":
        return implies(o[1], n[1])
    if n[0] == o[0] and n[0] in ("exists", "forall") and n[1:4] == o[1:4]:
        return implies(n[4], o[4])
    if n[0] == o[0] == "let" and n[1:3] == o[1:3]:
        return implies(n[3], o[3])
    return False


def strengthens(new: dict, old: dict) -> bool:
    """Whether an action of shape ``new`` allows only moves an action of shape ``old``
    allows, with the same effect (see the module's doc)."""
    try:
        if new["relaxed"] != old["relaxed"]:
            return False
        at: dict[str, list] = {}
        for line in new["requires"]:
            place, text = line.split(" ", 1)
            at.setdefault(place, []).append(_parse(text))
        for line in old["requires"]:
            place, text = line.split(" ", 1)
            if not implies(["and", at.get(place, [])], _parse(text)):
                return False
        return True
    except (KeyError, TypeError, IndexError, ValueError, AttributeError):
        return False        # a shape of another form (a stored row): no claim


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
