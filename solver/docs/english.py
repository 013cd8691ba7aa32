"""Checked IR to English (in the manner of Ludii's ``toEnglish``): one sentence per rule.

Generic over the language, never over a game: it reads node kinds, operators, types and the names
the spec itself chose (state fields, record fields, defs, binders), turning ``_`` into spaces.
Boolean expressions become clauses (with negation pushed inwards, so ``not (a < b)`` reads "a is
at least b"); other expressions become noun phrases.  A node it does not know (a construct added
to the language later) falls back to its source text, so a new construct never breaks the docs.
"""
from __future__ import annotations

from ..lang import ir
from ..lang.codec import to_json
from ..lang.irwalk import nodes
from ..lang.types import BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT

_CMP = {  # op: (positive, negated)
    "==": ("is", "is not"),
    "!=": ("is not", "is"),
    "<": ("is less than", "is at least"),
    "<=": ("is at most", "is more than"),
    ">": ("is more than", "is at most"),
    ">=": ("is at least", "is less than"),
}
_BAG_CMP = {"<=": ("is contained in", "is not contained in"),
            ">=": ("contains", "does not contain")}
_ARITH = {"+": "plus", "-": "minus", "*": "times", "/": "divided by", "%": "modulo"}
_BAG_ARITH = {"+": "together with", "-": "without"}
_BUILTIN_NOUN = {
    "len": "the length of {0}", "top": "the top of {0}", "bottom": "the bottom of {0}",
    "push": "{0} with {1} on top", "push_bottom": "{0} with {1} at the bottom",
    "pop": "{0} without its top", "pop_bottom": "{0} without its bottom",
    "size": "the size of {0}", "old": "the previous {0}",
    "least": "the lesser of {0} and {1}", "most": "the greater of {0} and {1}",
    "abs": "the absolute value of {0}",
    "component": "the squares of {1} connected to {0} through squares of {1}",
    "components": "the number of connected parts of {0}", "subbags": "the sub-collections of {0}",
}


def words(name: str) -> str:
    """An identifier as words: ``hand_size`` -> ``hand size``."""
    return name.replace("_", " ")


class English:
    """Renders IR expressions of one program.  ``sources`` maps a span's file to its text (for
    readings, which the checker folds to constants, and for the fallback)."""

    def __init__(self, sources: dict[str, str] | None = None,
                 readings: tuple[str, ...] = ()):
        self.sources = sources or {}
        self.readings = set(readings)

    # ---- helpers ------------------------------------------------------------------------

    def source(self, e) -> str | None:
        sp = getattr(e, "span", None)
        text = self.sources.get(getattr(sp, "file", None)) if sp is not None else None
        if text is None or not sp.line or not sp.end_line:
            return None
        lines = text.split("\n")
        if sp.line == sp.end_line:
            return lines[sp.line - 1][sp.col - 1:sp.end_col - 1]
        parts = [lines[sp.line - 1][sp.col - 1:]] + lines[sp.line:sp.end_line - 1] \
            + [lines[sp.end_line - 1][:sp.end_col - 1]]
        return " ".join(p.strip() for p in parts)

    def _fallback(self, e) -> str:
        src = self.source(e)
        return f"`{src}`" if src else f"({type(e).__name__})"

    @staticmethod
    def _binder_name(body, slot: int) -> str:
        for n in nodes(body):
            if isinstance(n, ir.Local) and n.slot == slot:
                return n.name
        return "it"

    def _reading(self, e) -> str | None:
        """The reading a constant stands for, when the spec wrote the reading's name there."""
        if isinstance(e, ir.Const) and isinstance(e.type, EnumT) and e.type.name in self.readings:
            if self.source(e) == e.type.name:
                return e.type.name
        return None

    def domain(self, d, name: str) -> str:
        match d:
            case ir.TypeDomain(elem=t):
                return f"{name} in {self.source(d) or _type_noun(t)}"
            case ir.RangeDomain(lo=lo, hi=hi):
                return f"{name} from {self.noun(lo)} to {self.noun(hi)}"
            case ir.CollDomain(coll=c):
                return f"{name} in {self.noun(c)}"
            case ir.SubbagDomain(coll=c):
                return f"{name} among the sub-collections of {self.noun(c)}"
        return f"{name} in {self._fallback(d)}"

    # ---- noun phrases -----------------------------------------------------------------

    def noun(self, e) -> str:
        """A value as a noun phrase."""
        # A bool read from a map or a builtin is named, not turned into a clause: `clause`
        # names those through `noun`, and the two would call each other for ever.
        if isinstance(e.type if hasattr(e, "type") else None, BoolT) and not isinstance(
                e, (ir.Const, ir.Local, ir.Field, ir.Index, ir.Builtin)):
            return f"whether {self.clause(e)}"
        match e:
            case ir.Const(type=t, value=v):
                r = self._reading(e)
                if r is not None:
                    return f"the reading {r}"
                src = self.source(e)
                if src and src.isidentifier() and src not in ("true", "false") \
                        and src != str(to_json(t, v)):
                    return words(src)  # a param or const the checker folded: keep its name
                if isinstance(t, BoolT):
                    return "true" if v else "false"
                if isinstance(t, (IntT, EnumT)):
                    return str(to_json(t, v))
                return src if src else str(to_json(t, v))
            case ir.Local(name=n):
                return n
            case ir.StateRef(old=old):
                return "the previous state" if old else "the state"
            case ir.Field(record=ir.StateRef(old=old), name=n):
                return f"the previous {words(n)}" if old else words(n)
            case ir.Field(record=r, name=n):
                return f"the {words(n)} of {self.noun(r)}"
            case ir.Index(coll=c, key=k):
                ct = c.type
                if isinstance(ct, BagT):
                    return f"the number of {self.noun(k)} in {self.noun(c)}"
                if isinstance(ct, SeqT):
                    return f"the element at position {self.noun(k)} of {self.noun(c)}"
                if isinstance(ct, MapT):
                    sep = " at " if isinstance(c, ir.Index) else " of "
                    return f"{self.noun(c)}{sep}{self.noun(k)}"
                return self._fallback(e)
            case ir.Unary(op="neg", arg=a):
                return f"minus {self.noun(a)}"
            case ir.Binary(op=op, left=l, right=r) if op in _ARITH:
                word = _BAG_ARITH.get(op) if isinstance(e.type, BagT) else None
                # Keep the grouping the symbols had: n * (n + 1) / 2 is not n * n + 1 / 2.
                left, right = self.noun(l), self.noun(r)
                if _prec(l) < _prec(e):
                    left = f"({left})"
                if _prec(r) <= _prec(e) and _prec(r) < 9:
                    right = f"({right})"
                return f"{left} {word or _ARITH[op]} {right}"
            case ir.Ite(cond=c, then=t, other=o):
                return f"{self.noun(t)} if {self.clause(c)}, otherwise {self.noun(o)}"
            case ir.Let(slot=s, value=v, body=b):
                return f"{self.noun(b)}, where {self._binder_name(b, s)} is {self.noun(v)}"
            case ir.Call(name=n, args=args, body=body):
                # `old(f(x))` checks f's body against the previous state: say so.
                refs = [x.old for x in nodes(body) if isinstance(x, ir.StateRef)]
                the = "the previous" if refs and all(refs) else "the"
                if not args:
                    return f"{the} {words(n)}"
                return f"{the} {words(n)} of {_and(self.noun(a) for a in args)}"
            case ir.Builtin(name=n, args=args):
                pattern = _BUILTIN_NOUN.get(n)
                if pattern is not None and pattern.count("{") <= len(args):
                    return pattern.format(*(self.noun(a) for a in args))
                return f"{words(n)} of {_and(self.noun(a) for a in args)}"
            case ir.RecordLit(type=t, items=items):
                name = t.name if isinstance(t, RecordT) else "record"
                return f"the {name} ({', '.join(self.noun(i) for i in items)})"
            case ir.SeqLit(items=items):
                if not items:
                    return "the empty sequence"
                return "the sequence " + ", ".join(self.noun(i) for i in items)
            case ir.BagLit(items=items):
                if not items:
                    return "nothing"
                return "{" + ", ".join(self.noun(i) for i in items) + "}"
            case ir.With(record=r, updates=ups):
                fields = r.type.fields if isinstance(r.type, RecordT) else ()
                parts = [f"{words(fields[i][0]) if i < len(fields) else i} "
                         f"{self.noun(v)}" for i, v in ups]
                return f"{self.noun(r)} with {_and(parts)}"
            case ir.Quant(kind=k, slot=s, domain=d, where=w, body=b):
                over = self.domain(d, self._binder_name(b, s) if b is not None else "it")
                if w is not None:
                    over += f" such that {self.clause(w)}"
                match k:
                    case "count":
                        return f"the number of {over} such that {self.clause(b)}"
                    case "sum":
                        return f"the sum of {self.noun(b)} over {over}"
                    case "max":
                        return f"the maximum of {self.noun(b)} over {over}"
                    case "min":
                        return f"the minimum of {self.noun(b)} over {over}"
                    case "table":
                        return f"{self.noun(b)} for each {over}"
            case ir.Largest(count=k, groups=gs):
                parts = []
                for g in gs:
                    each = _and(self.noun(v) if n is None
                                else f"{self.noun(v)} ({self.noun(n)} times)"
                                for v, n in zip(g.values, g.times))
                    if g.domain is not None:
                        over = self.domain(g.domain, self._binder_name((g.values, g.times, g.where),
                                                                       g.slot))
                        if g.where is not None:
                            over += f" such that {self.clause(g.where)}"
                        each += f" for each {over}"
                    parts.append(each)
                return (f"the sum of the {self.noun(k)} largest items above 0 among "
                        f"{'; '.join(parts)}")
            case ir.Fix(slot=s, seed=seed, step=step):
                r = self._binder_name(step, s)
                return (f"the least {r} that starts as {self.noun(seed)} and is closed under "
                        f"{r} becoming {self.noun(step)}")
            case ir.Text(value=v):
                return f'"{v}"'
            case ir.RealVar(name=n, key=k):
                return f"the unknown {n} of {self.noun(k)}"
        return self._fallback(e)

    @staticmethod
    def _disjunction(e, neg: bool) -> bool:
        while isinstance(e, ir.Unary) and e.op == "not":
            e, neg = e.arg, not neg
        return isinstance(e, ir.Binary) and (e.op == "or") != neg and e.op in ("and", "or")

    def _grouped(self, e, neg: bool, text: str) -> str:
        if self._disjunction(e, neg) and not text.startswith("if "):
            return "either " + text.replace(", or ", " or ")
        return text

    def _reading_test(self, e) -> bool:
        return isinstance(e, ir.Binary) and e.op == "==" and bool(
            self._reading(e.left) or self._reading(e.right))

    # ---- clauses ----------------------------------------------------------------------

    def clause(self, e, neg: bool = False) -> str:
        """A boolean expression as a clause; ``neg`` states its negation."""
        match e:
            case ir.Const(type=BoolT(), value=v):
                return "true" if bool(v) != neg else "false"
            case ir.Unary(op="not", arg=a):
                return self.clause(a, not neg)
            case ir.Binary(op="or", left=ir.Unary(op="not", arg=a), right=r) if not neg:
                # `a implies b` is checked as `not a or b`: say it the way it was meant.
                return f"if {self.clause(a)}, then {self.clause(r)}"
            case ir.Binary(op="or", left=l, right=r) if not neg and self._reading_test(l):
                # `reading == option or rule`: the rule, except under that reading.
                return f"{self.clause(r)}, unless {self.clause(l)}"
            case ir.Binary(op="and" | "or", left=l, right=r):
                conj = (e.op == "and") != neg
                left, right = self.clause(l, neg), self.clause(r, neg)
                if conj:
                    # A disjunction inside a conjunction: "either ... or ..." keeps the grouping.
                    left = self._grouped(l, neg, left)
                    right = self._grouped(r, neg, right)
                    return f"{left} and {right}"
                return f"{left}, or {right}"
            case ir.Binary(op=op, left=l, right=r) if op in _CMP:
                ra, rb = self._reading(l), self._reading(r)
                if op in ("==", "!=") and (ra or rb):
                    other = r if ra else l
                    yes = (op == "==") != neg
                    return (f"the reading {ra or rb} is {'' if yes else 'not '}"
                            f"{self.noun(other)}")
                table = _BAG_CMP if isinstance(l.type, BagT) and op in _BAG_CMP else _CMP
                word = table[op][1 if neg else 0]
                if op in ("==", "!=") and isinstance(r, ir.SeqLit) and not r.items:
                    return f"{self.noun(l)} {'is' if (op == '==') != neg else 'is not'} empty"
                return f"{self.noun(l)} {word} {self.noun(r)}"
            case ir.Member(elem=x, coll=c):
                return f"{self.noun(x)} is {'not ' if neg else ''}in {self.noun(c)}"
            case ir.Index(coll=c, key=k) if isinstance(c.type, SetT):
                return f"{self.noun(k)} is {'not ' if neg else ''}in {self.noun(c)}"
            case ir.Ite(cond=c, then=t, other=o):
                return (f"{self.clause(t, neg)} if {self.clause(c)}, "
                        f"otherwise {self.clause(o, neg)}")
            case ir.Call(name=n, args=args):
                if not args:
                    return f"{words(n)} {'does not hold' if neg else 'holds'}"
                if len(args) == 1:
                    return f"{self.noun(args[0])} is {'not ' if neg else ''}{words(n)}"
                return (f"{words(n)} {'does not hold' if neg else 'holds'} for "
                        f"{_and(self.noun(a) for a in args)}")
            case ir.Quant(kind="forall" | "exists", slot=s, domain=d, where=w, body=b):
                over = self.domain(d, self._binder_name(b, s))
                if w is not None:
                    over += f" such that {self.clause(w)}"
                every = (e.kind == "forall") != neg
                return f"for {'every' if every else 'some'} {over}, {self.clause(b, neg)}"
            case ir.Let(slot=s, value=v, body=b):
                return f"{self.clause(b, neg)}, where {self._binder_name(b, s)} is {self.noun(v)}"
            case ir.RealExists(name=n, slot=s, domain=d, where=w, body=b):
                k = self._binder_name(w, s) if w is not None else "k"
                over = self.domain(d, k)
                if w is not None:
                    over += f" such that {self.clause(w)}"
                return (f"there are {'no ' if neg else ''}real numbers {n}[{k}], one for each "
                        f"{over}, such that {self.clause(b)}")
            case ir.Reachable(actions=acts, within=w, goal=g, setup=setup):
                start = "the state its from block sets up" if setup else "here"
                return (f"{'no' if neg else 'some'} sequence of legal moves "
                        f"({_or(words(a) for a in acts)}), {self.noun(w)} at most, leads from "
                        f"{start} to a state where {self.clause(g)}")
            case ir.Local() | ir.Field():
                return f"{self.noun(e)} is {'false' if neg else 'true'}"
            case ir.Index() | ir.Builtin():
                return f"{'not ' if neg else ''}{self.noun(e)}"
        text = self._fallback(e)
        return f"not {text}" if neg else text


def _prec(e) -> int:
    """Binding strength of an arithmetic node (9: an atom as far as English goes)."""
    if isinstance(e, ir.Binary) and e.op in _ARITH:
        return 1 if e.op in "+-" else 2
    return 9


def _and(parts) -> str:
    parts = list(parts)
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _or(parts) -> str:
    parts = list(parts)
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _type_noun(t) -> str:
    return str(t)


# ---- sentences --------------------------------------------------------------------------

def for_program(program: ir.Program, sources: dict[str, str]) -> English:
    return English(sources, tuple(r.name for r in program.readings))


def move_phrase(action: ir.Action) -> str:
    """``build(c in hand)`` -> ``build c``."""
    return " ".join([words(action.name)] + [b.name for b in action.params])


def rule_sentence(en: English, action: ir.Action, req: ir.Requires) -> str:
    """A `requires` of an action as one English sentence."""
    c = req.cond
    if isinstance(c, ir.Binary) and c.op == "or" and isinstance(c.left, ir.Unary) \
            and c.left.op == "not":
        # `a implies b` (or `not a or b`): the rule only applies when a holds.
        cond = f"{en.clause(c.right)}, whenever {en.clause(c.left.arg)}"
    else:
        cond = en.clause(c)
    if action.chance:
        return f"The chance move {move_phrase(action)} happens only if {cond}."
    return f"You may {move_phrase(action)} only if {cond}."


def invariant_sentence(en: English, inv: ir.Invariant) -> str:
    if inv.transition:
        return f"After every move, {en.clause(inv.expr)}."
    return f"In every reachable state, {en.clause(inv.expr)}."


def checked_def(game, name: str) -> ir.Call | None:
    """The checked IR of a `def`, called on its own parameters (defs are checked per call
    site, so there is no standalone IR); None for a proc or when it does not check alone."""
    from ..lang.errors import RulebookError
    sym = game.symbols
    if ("def", name) not in sym.items:
        return None
    try:
        params = sym.def_params(name)
        return sym.call(name, [ir.Local(pt, None, pn, i) for i, (pn, pt) in enumerate(params)])
    except (RulebookError, AttributeError, IndexError):
        return None


def def_sentence(en: English, call: ir.Call) -> str:
    """A def (as given by `checked_def`) in English."""
    args = _and(en.noun(a) for a in call.args)
    if isinstance(call.type, BoolT):
        head = f"{words(call.name)} holds" + (f" for {args}" if args else "")
        return f"{head} when {en.clause(call.body)}."
    head = f"The {words(call.name)}" + (f" of {args}" if args else "")
    return f"{head} is {en.noun(call.body)}."


def to_english(expr, sources: dict[str, str] | None = None,
               readings: tuple[str, ...] = ()) -> str:
    """An IR expression in English: a clause for a boolean, a noun phrase otherwise."""
    en = English(sources, readings)
    return en.clause(expr) if isinstance(getattr(expr, "type", None), BoolT) else en.noun(expr)
