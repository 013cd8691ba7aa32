"""Check: resolve names, infer types and bounds, and lower a parsed spec (plus the files it
extends) to the typed IR of `ir.py`, under chosen parameter values and readings."""
from __future__ import annotations

import ast as _pyast
import contextlib
import gc
from dataclasses import dataclass, field
from pathlib import Path

from lark import Token, Tree

from . import ir
from ..engine import regions
from .errors import Span, SpecError
from .irwalk import LEAVES, NOT_IR
from .resources import spec_dir
from .realcheck import REAL, RealChecks
from .syntax import parse
from .types import (BOOL, BagT, BoolT, EnumT, IntT, MapT, RealFamilyT, RealT, RecordT, SeqT,
                    SetT, TextT, Type, cardinality, default, finite, is_finite)

BUILTIN_TYPES = {"bool"}


@dataclass
class Item:
    kind: str
    name: str
    tree: Tree
    doc: ir.Doc
    file: str
    text: str
    override: bool = False
    extra: list = field(default_factory=list)  # `extend` blocks appended to an action / init


@dataclass
class SourceFile:
    path: str
    text: str
    tree: Tree
    game: str
    title: str
    base: str | None


class Frame:
    """Allocates the local slots of one compiled unit (an action, an invariant, a query...)."""

    def __init__(self) -> None:
        self.size = 0

    def new(self) -> int:
        self.size += 1
        return self.size - 1


@dataclass(frozen=True)
class Scope:
    names: dict
    frame: Frame
    old: bool = False          # state references mean the previous state (transition props)
    transition: bool = False   # `old(...)` is allowed
    allow_state: bool = True

    def bind(self, name: str, local: ir.Local) -> "Scope":
        return Scope({**self.names, name: local}, self.frame, self.old, self.transition,
                     self.allow_state)


@contextlib.contextmanager
def gc_paused():
    """Python's cycle collector off while a spec is compiled (as a `with` block or a
    decorator): parsing, checking and building make hundreds of thousands of objects and no
    garbage worth collecting before the end, and each collection rescans all of them (half
    of a large spec's compile time).  Nested pauses restore the state the outermost found."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_SLOT_FIELDS = ("slot", "family")
# Per IR class, how `_renumber` treats each field: 0 kept (a type, a span), 1 a slot, 2 a
# tuple of slots, 3 a part to renumber; None for a class that holds no local (not IR, or a
# constant).
_PLANS: dict = {}


def _plan(cls):
    if cls.__module__ != ir.__name__ or issubclass(cls, LEAVES):
        return None
    return tuple((f, 0 if f in NOT_IR else 1 if f in _SLOT_FIELDS else 2 if f == "slots" else 3)
                 for f in cls.__dataclass_fields__)


def _renumber(node, moved: dict):
    """The IR ``node`` with every local slot s (binders, lets, calls, fixpoints, real
    families, and the locals that read them) replaced by ``moved[s]``.  Types, spans and
    constants' values are kept as they are.  The checker's hot spot: each call of a def
    renumbers the def's checked body.  A part met twice (the IR shares sub-trees) is
    renumbered once, and a node is copied field by field, without the frozen dataclass's
    `__init__`."""
    memo: dict = {}
    plans = _PLANS

    def go(node):
        cls = type(node)
        if cls is tuple:
            return tuple([go(x) for x in node])
        plan = plans.get(cls, False)
        if plan is False:
            plan = plans[cls] = _plan(cls)
        if plan is None:
            return node
        done = memo.get(id(node))
        if done is not None:
            return done
        d = dict(node.__dict__)
        for f, kind in plan:
            v = d[f]
            if kind == 1:
                d[f] = moved[v]
            elif kind == 2:
                d[f] = tuple([moved[x] for x in v])
            elif kind == 3:
                d[f] = go(v)
        new = object.__new__(cls)
        object.__setattr__(new, "__dict__", d)
        memo[id(node)] = new
        return new

    return go(node)


def find_spec(name: str) -> Path:
    path = spec_dir() / f"{name}.rules"
    if not path.is_file():
        # Games of one's own (the tutorial's): RULEBOOK_SPECS lists more directories to search.
        import os
        for d in os.environ.get("RULEBOOK_SPECS", "").split(os.pathsep):
            if d and (Path(d) / f"{name}.rules").is_file():
                return Path(d) / f"{name}.rules"
        known = sorted(p.stem for p in spec_dir().glob("*.rules"))
        raise SpecError(f"no spec named {name!r} (known: {', '.join(known)})")
    return path


def read_source(path: Path) -> SourceFile:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        line = path.read_bytes()[:e.start].count(b"\n") + 1
        raise SpecError(f"not UTF-8 text (byte {e.start})", Span(_display(path), line, 1)) \
            from None
    except OSError as e:
        raise SpecError(f"cannot read: {e.strerror}", Span(_display(path), 0, 0)) from None
    tree = parse(text, _display(path))
    header = tree.children[0]
    game = _string(header.children[0])
    title = _string(header.children[1]) if header.children[1] is not None else game
    base = _string(header.children[2]) if header.children[2] is not None else None
    return SourceFile(_display(path), text, tree, game, title, base)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _string(tok: Token) -> str:
    s = str(tok)
    if s.startswith('"""'):
        return s[3:-3]
    return _pyast.literal_eval(s)


@gc_paused()
def load_files(game: str, variants: tuple[str, ...]) -> tuple[list[SourceFile], dict[str, str]]:
    """Return the source files (base first) and the reading choices named by ``variants``.

    A variant is either an extension file (``tours-de-pouvoir``) or ``reading:option``."""
    files: list[SourceFile] = []
    chain: list[SourceFile] = []
    src = read_source(find_spec(game))
    seen = {src.game}
    while True:
        chain.append(src)
        if src.base is None:
            break
        if src.base in seen:
            raise SpecError(f"{src.path}: `extends` cycle through {src.base!r}")
        seen.add(src.base)
        src = read_source(find_spec(src.base))
    files.extend(reversed(chain))
    readings: dict[str, str] = {}
    for v in variants:
        if ":" in v:
            r, _, opt = v.partition(":")
            readings[r.strip()] = opt.strip()
            continue
        ext = read_source(find_spec(v))
        if ext.base not in {f.game for f in files}:
            raise SpecError(f"variant {v!r} extends {ext.base!r}, not {game!r}")
        files.append(ext)
    return files, readings


def compile_program(game: str, variants: tuple[str, ...] = (), params: dict | None = None
                    ) -> ir.Program:
    files, readings = load_files(game, tuple(variants))
    return Checker(files, params or {}, readings).program()


class Checker(RealChecks):
    @gc_paused()
    def __init__(self, files: list[SourceFile], params: dict, readings: dict[str, str]):
        self.files = files
        self.param_overrides = dict(params)
        self.reading_choices = dict(readings)
        self.items: dict[tuple[str, str], Item] = {}
        self.order: list[tuple[str, str]] = []
        self.static: dict[str, object] = {}     # name -> resolved param/const value or Type
        # A def's body is checked again at every call, so the same parse nodes come back: their
        # spans and written types (which read only parameters and constants) are made once.
        self._spans: dict = {}                  # (id(node), file) -> (node, Span)
        self._types: dict = {}                  # id(type node) -> (node, Type)
        self._bodies: dict = {}                 # a def checked once: see _call
        self.static_kind: dict[str, str] = {}
        self.resolving: set[str] = set()
        self.enum_members: dict[str, tuple[EnumT, int]] = {}
        self.readings: dict[str, ir.ReadingDecl] = {}
        self.params: list[ir.Param] = []
        self.param_values: dict[str, object] = {}
        self.state_fields: list[ir.StateFieldDecl] = []
        self.state_type: RecordT | None = None
        self.inlining: list[str] = []
        self._collect()

    # ---- collecting declarations across files --------------------------------------------

    def _collect(self) -> None:
        kinds = {
            "param_decl": "static", "enum_decl": "static", "type_decl": "static",
            "record_decl": "static", "const_decl": "static", "reading_decl": "static",
            "def_decl": "def", "proc_decl": "proc", "state_decl": "state", "init_decl": "init",
            "action_decl": "action", "invariant_decl": "invariant",
            "transition_decl": "invariant", "example_decl": "example", "puzzle_decl": "puzzle",
            "terminal_decl": "terminal", "actor_decl": "actor", "extend_decl": "extend",
            "extend_puzzle_decl": "extend", "rotate_decl": "rotate",
        }
        for f in self.files:
            for item in f.tree.children[1:]:
                doc_t, ovr, decl = item.children
                doc = ir.Doc()
                if doc_t is not None:
                    doc = ir.Doc(_string(doc_t.children[0]),
                                 _string(doc_t.children[1]) if doc_t.children[1] else "")
                kind = kinds[decl.data]
                name = self._decl_name(decl, kind)
                it = Item(kind, name, decl, doc, f.path, f.text, override=ovr is not None)
                if kind == "extend":
                    self._extend(it)
                    continue
                key = (kind if kind != "static" else "static", name)
                if kind == "state":
                    if key in self.items:
                        self.items[key].extra.append(it)
                        continue
                if key in self.items:
                    prev = self.items[key]
                    if not it.override:
                        raise self.err(decl, f"{name!r} is already declared at "
                                       f"{self._span(prev.tree, prev.file)}; write `override` "
                                       f"to replace it")
                    self.items[key] = it
                    continue
                if it.override:
                    raise self.err(decl, f"`override` of {name!r}, which the base game does "
                                   f"not declare", f.path, f.text)
                self.items[key] = it
                self.order.append(key)
        for key in self.order:
            it = self.items[key]
            if it.kind == "static":
                self.static_kind[it.name] = it.tree.data

    def _extend(self, it: Item) -> None:
        name = it.name
        if it.tree.data == "extend_puzzle_decl":
            if ("puzzle", name) not in self.items:
                raise self.err(it.tree, f"`extend puzzle {name}`: no puzzle named {name!r}",
                               it.file, it.text)
            self.items[("puzzle", name)].extra.append(it)
            return
        if name == "init":
            if it.tree.children[1] is not None:
                raise self.err(it.tree.children[1], "`extend init` only appends (no "
                               "`before`/`after`)", it.file, it.text)
            keys = [("init", "init")]
        else:
            keys = [k for k in (("action", name), ("proc", name)) if k in self.items]
        if not keys or keys[0] not in self.items:
            raise self.err(it.tree, f"`extend {name}`: no action, proc or init named {name!r}",
                           it.file, it.text)
        if len(keys) > 1:
            raise self.err(it.tree, f"`extend {name}`: {name!r} names both an action and a "
                           f"proc", it.file, it.text)
        self.items[keys[0]].extra.append(it)

    @staticmethod
    def _ext_before(ext: Item) -> bool:
        """Whether an `extend` block runs ahead of the body it extends (`before`)."""
        w = ext.tree.children[1] if ext.tree.data == "extend_decl" else None
        return w is not None and str(w.children[0]) == "before"

    @staticmethod
    def _ext_block(ext: Item):
        return ext.tree.children[-1]

    def _decl_name(self, decl: Tree, kind: str) -> str:
        if kind in ("state", "init", "terminal", "actor", "rotate"):
            return kind
        if decl.data == "action_decl":
            return str(decl.children[1])
        return str(decl.children[0])

    # ---- errors and spans ---------------------------------------------------------------

    def _cur(self) -> tuple[str, str]:
        return getattr(self, "_file", self.files[-1].path), getattr(self, "_text",
                                                                      self.files[-1].text)

    def _span(self, node, file: str | None = None) -> Span:
        file = file or self._cur()[0]
        hit = self._spans.get((id(node), file))
        if hit is not None and hit[0] is node:
            return hit[1]
        span = self._make_span(node, file)
        self._spans[(id(node), file)] = (node, span)
        return span

    @staticmethod
    def _make_span(node, file: str) -> Span:
        if isinstance(node, Token):
            return Span(file, node.line or 0, node.column or 0, node.end_line or 0,
                        node.end_column or 0)
        meta = getattr(node, "meta", None)
        if meta is None or getattr(meta, "empty", True):
            return Span(file, 0, 0)
        return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)

    def err(self, node, msg: str, file: str | None = None, text: str | None = None) -> SpecError:
        f, t = self._cur()
        return SpecError(msg, self._span(node, file or f), text or t)

    def _enter(self, it: Item) -> None:
        self._file, self._text = it.file, it.text

    def _source(self, it: Item) -> str:
        m = it.tree.meta
        return it.text[m.start_pos:m.end_pos] if not m.empty else ""

    # ---- static declarations (params, enums, types, records, consts, readings) -----------

    def static_value(self, name: str, node):
        if name in self.static:
            return self.static[name]
        key = ("static", name)
        if key not in self.items:
            return None
        if name in self.resolving:
            raise self.err(node, f"{name!r} is defined in terms of itself")
        self.resolving.add(name)
        saved = self._cur()
        it = self.items[key]
        self._enter(it)
        try:
            value = self._resolve_static(it)
        finally:
            self._file, self._text = saved
            self.resolving.discard(name)
        self.static[name] = value
        return value

    def _resolve_static(self, it: Item):
        t = it.tree
        sc = Scope({}, Frame(), allow_state=False)
        match t.data:
            case "param_decl":
                typ = self.type_(t.children[1])
                dflt = self.const_eval(t.children[2], sc)
                value = self.param_overrides.get(it.name, dflt)
                if not _fits(value, typ):
                    raise self.err(t, f"parameter {it.name} = {value!r} is outside {typ}")
                self.params.append(ir.Param(it.name, typ, dflt, it.doc, self._span(t)))
                self.param_values[it.name] = value
                return ("value", typ, value)
            case "enum_decl":
                members = tuple(str(m.children[0]) for m in t.children[1:])
                et = EnumT(it.name, members, _json_spellings(self, t.children[1:]))
                for i, m in enumerate(members):
                    self._add_member(m, et, i, t)
                return ("type", et)
            case "type_decl":
                return ("type", self.type_(t.children[1]))
            case "record_decl":
                fields = tuple((str(f.children[0]), self.type_(f.children[1]))
                               for f in t.children[1:])
                return ("type", RecordT(it.name, fields))
            case "const_decl":
                e = self.expr(t.children[1], sc)
                return ("value", e.type, self._eval_const(e, t))
            case "reading_decl":
                opts = tuple((str(o.children[0]), _string(o.children[1])) for o in t.children[2:])
                names = [o for o, _ in opts]
                dflt = str(t.children[1])
                if dflt not in names:
                    raise self.err(t.children[1], f"default {dflt!r} is not one of the readings "
                                   f"{', '.join(names)}")
                chosen = self.reading_choices.get(it.name, dflt)
                if chosen not in names:
                    from .errors import InputError
                    raise InputError(f"reading {it.name!r} has no option {chosen!r} "
                                     f"(options: {', '.join(names)})")
                et = EnumT(it.name, tuple(names))
                for i, m in enumerate(names):
                    self._add_member(m, et, i, t)
                self.readings[it.name] = ir.ReadingDecl(it.name, opts, dflt, chosen, it.doc,
                                                        self._span(t))
                return ("value", et, names.index(chosen))
        raise AssertionError(t.data)

    def _add_member(self, m: str, et: EnumT, i: int, node) -> None:
        if m in self.enum_members and self.enum_members[m][0] != et:
            raise self.err(node, f"{m!r} names a value of both {self.enum_members[m][0]} and "
                           f"{et}; enum values must be unique")
        self.enum_members[m] = (et, i)

    def const_eval(self, tree, sc: Scope):
        e = self.expr(tree, sc)
        return self._eval_const(e, tree)

    def _eval_const(self, e: ir.Expr, node):
        from ..engine.evaluate import const_value
        try:
            return const_value(e)
        except SpecError:
            raise
        except Exception as ex:  # a constant must not read the state or fail
            raise self.err(node, f"not a constant: {ex}") from None

    def _lookup_enum_member(self, name: str):
        if name in self.enum_members:
            return self.enum_members[name]
        # Members are registered when their enum or reading is resolved: resolve them all.
        for key in self.order:
            if key[0] == "static" and self.static_kind.get(key[1]) in ("enum_decl",
                                                                       "reading_decl"):
                self.static_value(key[1], None)
        return self.enum_members.get(name)

    # ---- types -------------------------------------------------------------------------

    def type_(self, t) -> Type:
        hit = self._types.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        typ = self._type(t)
        self._types[id(t)] = (t, typ)
        return typ

    def _type(self, t) -> Type:
        match t.data:
            case "bool_type":
                return BOOL
            case "type_name":
                name = str(t.children[0])
                v = self.static_value(name, t)
                if v is None or v[0] != "type":
                    raise self.err(t, f"unknown type {name!r}")
                return v[1]
            case "range_type":
                sc = Scope({}, Frame(), allow_state=False)
                lo, hi = self.const_eval(t.children[0], sc), self.const_eval(t.children[1], sc)
                if not isinstance(lo, int) or not isinstance(hi, int) or lo > hi:
                    raise self.err(t, f"empty or invalid range {lo}..{hi}")
                return IntT(lo, hi)
            case "seq_type" | "bag_type":
                elem = self.type_(t.children[0])
                n = self.const_eval(t.children[1], Scope({}, Frame(), allow_state=False))
                if not isinstance(n, int) or n < 0:
                    raise self.err(t.children[1], "a bound must be a non-negative integer")
                if t.data == "seq_type":
                    return SeqT(elem, n)
                self._need_finite(elem, t)
                return BagT(elem, n)
            case "map_type":
                k = self.type_(t.children[0])
                self._need_finite(k, t)
                return MapT(k, self.type_(t.children[1]))
            case "set_type":
                e = self.type_(t.children[0])
                self._need_finite(e, t)
                return SetT(e)
        raise AssertionError(t.data)

    def _need_finite(self, t: Type, node) -> None:
        if not is_finite(t) or cardinality(t) > 4096:
            raise self.err(node, f"{t} cannot be a key: keys must be small finite types "
                           f"(enums, ranges, records of them)")

    # ---- expressions -----------------------------------------------------------------------

    def expr(self, t, sc: Scope, want: Type | None = None) -> ir.Expr:
        sp = self._span(t)
        match t.data:
            case "int_lit":
                v = int(t.children[0])
                return ir.Const(IntT(v, v), sp, v)
            case "neg_int_lit":
                v = -int(t.children[0])
                return ir.Const(IntT(v, v), sp, v)
            case "true_lit":
                return ir.Const(BOOL, sp, True)
            case "false_lit":
                return ir.Const(BOOL, sp, False)
            case "var":
                return self._var(t, sc)
            case "state_ref":
                if not sc.allow_state or self.state_type is None:
                    raise self.err(t, "`state` is not available here")
                return ir.StateRef(self.state_type, sp, sc.old)
            case "call_expr":
                return self._call(t, sc, want)
            case "list_lit":
                return self._list(t, sc, want)
            case "set_lit":
                return self._set(t, sc, want)
            case "index":
                return self._index(t, sc)
            case "field_access":
                rec = self.expr(t.children[0], sc)
                name = str(t.children[1])
                if not isinstance(rec.type, RecordT) or rec.type.index(name) is None:
                    raise self.err(t, f"{rec.type} has no field {name!r}")
                i = rec.type.index(name)
                return ir.Field(rec.type.fields[i][1], sp, rec, i, name)
            case "with_":
                rec = self.expr(t.children[0], sc)
                if not isinstance(rec.type, RecordT):
                    raise self.err(t, f"`with` needs a record, not {rec.type}")
                ups = []
                for u in t.children[1:]:
                    name = str(u.children[0])
                    i = rec.type.index(name)
                    if i is None:
                        raise self.err(u, f"{rec.type} has no field {name!r}")
                    ft = rec.type.fields[i][1]
                    ups.append((i, self.coerce(self.expr(u.children[1], sc, ft), ft, u)))
                return ir.With(rec.type, sp, rec, tuple(ups))
            case "neg":
                a = self.expr(t.children[0], sc)
                if isinstance(a.type, RealT):
                    return ir.Unary(REAL, sp, "neg", a)
                if not isinstance(a.type, IntT):
                    raise self.err(t.children[0], f"expected a number, found {a.type}")
                return ir.Unary(IntT(-a.type.hi, -a.type.lo), sp, "neg", a)
            case "arith":
                return self._arith(t, sc, want)
            case "compare":
                return self._compare(t, sc)
            case "member" | "not_member":
                elem = self.expr(t.children[0], sc)
                coll = self.expr(t.children[1], sc)
                et = _elem_type(coll.type)
                if et is None:
                    raise self.err(t.children[1], f"`in` needs a seq, bag or set, not {coll.type}")
                if not _comparable(elem.type, et):
                    raise self.err(t, f"cannot look for a {elem.type} in a {coll.type}")
                m = ir.Member(BOOL, sp, elem, coll)
                return ir.Unary(BOOL, sp, "not", m) if t.data == "not_member" else m
            case "not_":
                a = self.bool_expr(t.children[0], sc)
                self.no_real(a, t, "`not` over real constraints: the body of `exists real` is "
                             "a conjunction of linear comparisons")
                return ir.Unary(BOOL, sp, "not", a)
            case "and_" | "or_":
                op = "and" if t.data == "and_" else "or"
                a = self.bool_expr(t.children[0], sc)
                b = self.bool_expr(t.children[1], sc)
                if op == "or" and (self.has_real(a) or self.has_real(b)):
                    raise self.err(t, "`or` over real constraints: the body of `exists real` "
                                   "must be a conjunction (use `if` or `implies` on a "
                                   "condition free of unknowns)")
                return ir.Binary(BOOL, sp, op, a, b)
            case "implies_":
                a = self.bool_expr(t.children[0], sc)
                self.no_real(a, t.children[0], "the condition of `implies` cannot use real "
                             "unknowns")
                b = self.bool_expr(t.children[1], sc)
                return ir.Binary(BOOL, sp, "or", ir.Unary(BOOL, sp, "not", a), b)
            case "ite":
                c = self.bool_expr(t.children[0], sc)
                self.no_real(c, t.children[0], "the condition of `if` cannot use real unknowns")
                a = self.expr(t.children[1], sc, want)
                b = self.expr(t.children[2], sc, want or a.type)
                typ = self.join(a.type, b.type, t)
                return ir.Ite(typ, sp, c, a, b)
            case "let_expr":
                v = self.expr(t.children[1], sc)
                slot = sc.frame.new()
                name = str(t.children[0])
                body = self.expr(t.children[2], sc.bind(name, ir.Local(v.type, sp, name, slot)),
                                 want)
                return ir.Let(body.type, sp, slot, v, body)
            case "quant":
                return self._quant(t, sc, want)
            case "largest":
                return self._largest(t, sc)
            case "real_exists":
                return self.real_exists(t, sc)
            case "fix_expr":
                return self._fix(t, sc, want)
        raise self.err(t, f"unsupported expression {t.data}")

    def _fix(self, t, sc: Scope, want) -> ir.Expr:
        name_t, seed_t, bound_t, step_t = t.children
        seed = self.expr(seed_t, sc, want)
        typ = seed.type
        if want is not None and isinstance(want, (MapT, SetT)) and _assignable(typ, want):
            if _needs_bounds(typ, want):
                raise self.err(seed_t, f"the seed of a fix must fit {want}, found {typ}")
            typ = want
        if bound_t is not None:
            try:
                n = self.const_eval(bound_t, Scope({}, Frame(), allow_state=False))
            except SpecError as ex:
                raise self.err(bound_t, f"`within` of a fix needs a constant count ({ex.message})"
                               ) from None
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise self.err(bound_t, f"`within` of a fix needs a constant count, found {n!r}")
        elif isinstance(typ, MapT) and isinstance(typ.val, BoolT) or isinstance(typ, SetT):
            # A growing set of keys stops changing after at most one step per key.
            n = cardinality(typ.key if isinstance(typ, MapT) else typ.elem)
        else:
            raise self.err(t, f"a fix over {typ} needs `within N` (only a map[K, bool] or a "
                           f"set[K] has a default bound)")
        if isinstance(typ, IntT):
            raise self.err(seed_t, "a fix iterates a map, set, record or bool, not a number "
                           "(its bounds could not be kept)")
        slot = sc.frame.new()
        name = str(name_t)
        step = self.expr(step_t, sc.bind(name, ir.Local(typ, self._span(name_t), name, slot)),
                         typ)
        if not _assignable(step.type, typ) or _needs_bounds(step.type, typ):
            raise self.err(step_t, f"the step of a fix must give a {typ}, found {step.type}")
        return ir.Fix(typ, self._span(t), slot, seed, n, step)

    def bool_expr(self, t, sc: Scope) -> ir.Expr:
        e = self.expr(t, sc, BOOL)
        if not isinstance(e.type, BoolT):
            raise self.err(t, f"expected a condition (bool), found {e.type}")
        return e

    def int_expr(self, t, sc: Scope) -> ir.Expr:
        e = self.expr(t, sc)
        if not isinstance(e.type, IntT):
            raise self.err(t, f"expected a number, found {e.type}")
        return e

    def _var(self, t, sc: Scope) -> ir.Expr:
        name = str(t.children[0])
        sp = self._span(t)
        if name in sc.names:
            loc = sc.names[name]
            if isinstance(loc.type, RealFamilyT):
                raise self.err(t, f"the unknowns {name} are read one at a time, as {name}[k]")
            return ir.Local(loc.type, sp, name, loc.slot)
        if sc.allow_state and self.state_type is not None:
            i = self.state_type.index(name)
            if i is not None:
                return ir.Field(self.state_type.fields[i][1], sp,
                                ir.StateRef(self.state_type, sp, sc.old), i, name)
        v = self.static_value(name, t)
        if v is not None:
            if v[0] == "value":
                return ir.Const(v[1] if not isinstance(v[1], IntT) else IntT(v[2], v[2]), sp,
                                v[2])
            raise self.err(t, f"{name!r} is a type, not a value")
        m = self._lookup_enum_member(name)
        if m is not None:
            return ir.Const(m[0], sp, m[1])
        if ("def", name) in self.items:
            raise self.err(t, f"{name!r} is a def: call it as {name}(...)")
        if not sc.allow_state and self.state_type is None and self._is_state_field(name):
            raise self.err(t, f"{name!r} is a state field; a constant cannot read the state")
        raise self.err(t, f"unknown name {name!r}")

    def _is_state_field(self, name: str) -> bool:
        it = self.items.get(("state", "state"))
        if it is None:
            return False
        return any(str(f.children[1]) == name for x in [it, *it.extra] for f in x.tree.children)

    def _index(self, t, sc: Scope) -> ir.Expr:
        rv = self.real_var(t, sc) if self.real_depth else None
        if rv is not None:
            return rv
        coll = self.expr(t.children[0], sc)
        sp = self._span(t)
        ct = coll.type
        match ct:
            case MapT(key=k, val=v):
                key = self.coerce(self.expr(t.children[1], sc, k), k, t.children[1])
                return ir.Index(v, sp, coll, key)
            case BagT(elem=e, most=m):
                key = self.coerce(self.expr(t.children[1], sc, e), e, t.children[1])
                return ir.Index(IntT(0, m), sp, coll, key)
            case SetT(elem=e):
                key = self.coerce(self.expr(t.children[1], sc, e), e, t.children[1])
                return ir.Index(BOOL, sp, coll, key)
            case SeqT(elem=e):
                key = self.int_expr(t.children[1], sc)
                return ir.Index(e, sp, coll, key)
        raise self.err(t, f"cannot index a {ct}")

    def _arith(self, t, sc: Scope, want) -> ir.Expr:
        op = str(t.children[1])
        sp = self._span(t)
        a = self.expr(t.children[0], sc, want if isinstance(want, BagT) else None)
        if isinstance(a.type, BagT) and op in "+-":
            b = self.coerce(self.expr(t.children[2], sc, a.type), a.type, t.children[2])
            bt = b.type
            most = a.type.most + (bt.most if isinstance(bt, BagT) else
                                  bt.val.hi if isinstance(bt, MapT) else 0)
            return ir.Binary(BagT(a.type.elem, most if op == "+" else a.type.most), sp, op, a, b)
        if isinstance(a.type, RealT):
            return self.real_arith(t, op, a, self.expr(t.children[2], sc))
        if not isinstance(a.type, IntT):
            raise self.err(t.children[0], f"expected a number, found {a.type}")
        b = self.expr(t.children[2], sc)
        if isinstance(b.type, RealT):
            return self.real_arith(t, op, a, b)
        if not isinstance(b.type, IntT):
            raise self.err(t.children[2], f"expected a number, found {b.type}")
        x, y = a.type, b.type
        match op:
            case "+":
                r = IntT(x.lo + y.lo, x.hi + y.hi)
            case "-":
                r = IntT(x.lo - y.hi, x.hi - y.lo)
            case "*":
                c = [x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi]
                r = IntT(min(c), max(c))
            case "/":
                if y.lo <= 0 <= y.hi and not (y.lo == y.hi == 0):
                    pass
                m = max(abs(x.lo), abs(x.hi))
                r = IntT(-m, m) if x.lo < 0 else IntT(0, m)
            case "%":
                m = max(abs(y.lo), abs(y.hi))
                r = IntT(0, max(0, m - 1))
            case _:
                raise AssertionError(op)
        return ir.Binary(r, sp, op, a, b)

    def _compare(self, t, sc: Scope) -> ir.Expr:
        op = str(t.children[1])
        a = self.expr(t.children[0], sc)
        b = self.expr(t.children[2], sc, a.type)
        sp = self._span(t)
        if isinstance(a.type, RealT) or isinstance(b.type, RealT):
            return self.real_compare(t, op, a, b)
        if op in ("==", "!="):
            if not _comparable(a.type, b.type):
                raise self.err(t, f"cannot compare {a.type} with {b.type}")
            return ir.Binary(BOOL, sp, op, a, b)
        if isinstance(a.type, BagT) and op == "<=" and _comparable(a.type, b.type):
            return ir.Binary(BOOL, sp, op, a, b)
        if not (isinstance(a.type, IntT) and isinstance(b.type, IntT)):
            raise self.err(t, f"`{op}` compares numbers (or bags with <=), not {a.type} and "
                           f"{b.type}")
        return ir.Binary(BOOL, sp, op, a, b)

    def _list(self, t, sc: Scope, want) -> ir.Expr:
        items_t = t.children[0].children if t.children[0] is not None else []
        sp = self._span(t)
        match want:
            case SeqT(elem=e, cap=cap):
                items = tuple(self.coerce(self.expr(i, sc, e), e, i) for i in items_t)
                if len(items) > cap:
                    raise self.err(t, f"{len(items)} elements do not fit in {want}")
                return ir.SeqLit(want, sp, items)
            case BagT(elem=e):
                items = tuple(self.coerce(self.expr(i, sc, e), e, i) for i in items_t)
                return ir.BagLit(want, sp, items)
            case MapT() | SetT() if not items_t:
                return ir.Const(want, sp, default(want))
        if not items_t:
            raise self.err(t, "cannot tell the type of `[]` here")
        items = [self.expr(i, sc) for i in items_t]
        et = items[0].type
        for i, it in zip(items_t[1:], items[1:]):
            et = self.join(et, it.type, i)
        return ir.SeqLit(SeqT(et, len(items)), sp, tuple(items))

    def _set(self, t, sc: Scope, want) -> ir.Expr:
        items_t = t.children[0].children if t.children[0] is not None else []
        sp = self._span(t)
        if isinstance(want, SetT):
            return ir.BagLit(want, sp, tuple(self.coerce(self.expr(i, sc, want.elem),
                                                         want.elem, i) for i in items_t))
        if not items_t:
            raise self.err(t, "cannot tell the type of `{}` here")
        items = [self.expr(i, sc) for i in items_t]
        et = items[0].type
        for i, it in zip(items_t[1:], items[1:]):
            et = self.join(et, it.type, i)
        self._need_finite(et, t)
        return ir.BagLit(SetT(et), sp, tuple(items))

    # ---- calls: builtins, record constructors, defs ---------------------------------------

    def _call(self, t, sc: Scope, want) -> ir.Expr:
        name = str(t.children[0])
        args_t = list(t.children[1].children) if t.children[1] is not None else []
        sp = self._span(t)
        if name in BUILTINS:
            return BUILTINS[name](self, t, args_t, sc, want)
        v = self.static_value(name, t)
        if v is not None and v[0] == "type" and isinstance(v[1], RecordT):
            rt = v[1]
            if len(args_t) != len(rt.fields):
                raise self.err(t, f"{name} takes {len(rt.fields)} fields, given {len(args_t)}")
            items = tuple(self.coerce(self.expr(a, sc, ft), ft, a)
                          for a, (_, ft) in zip(args_t, rt.fields))
            return ir.RecordLit(rt, sp, items)
        key = ("def", name)
        if key not in self.items:
            raise self.err(t, f"unknown function {name!r}")
        it = self.items[key]
        d = it.tree
        params = d.children[1].children if d.children[1] is not None else []
        if len(params) != len(args_t):
            raise self.err(t, f"{name} takes {len(params)} argument(s), given {len(args_t)}")
        if name in self.inlining:
            raise self.err(t, f"{name} calls itself (through {' -> '.join(self.inlining)}); "
                           f"defs may not recurse")
        args, slots = [], []
        inner = Scope({}, sc.frame, sc.old, sc.transition, sc.allow_state)
        saved = self._cur()
        self._enter(it)
        try:
            ptypes = [(str(p.children[0]), self.type_(p.children[1])) for p in params]
        finally:
            self._file, self._text = saved
        for a, (pn, pt) in zip(args_t, ptypes):
            args.append(self.coerce(self.expr(a, sc, pt), pt, a))
            slot = sc.frame.new()
            slots.append(slot)
            inner = inner.bind(pn, ir.Local(pt, sp, pn, slot))
        # The body reads only its parameters, the statics and the state (its scope starts
        # empty), so it is checked once per kind of scope; at the next call the same IR is
        # renumbered into this frame: its parameters' slots, then its own after the frame's.
        key = (name, sc.old, sc.transition, sc.allow_state, self.state_type is None)
        hit = self._bodies.get(key)
        if hit is not None:
            body0, slots0, base0, size, typ, check = hit
            base = sc.frame.size
            sc.frame.size += size
            moved = dict(zip(slots0, slots))
            moved.update((s0, s0 - base0 + base) for s0 in range(base0, base0 + size))
            return ir.Call(typ, sp, name, tuple(args), tuple(slots), _renumber(body0, moved),
                           check)
        base0 = sc.frame.size
        self.inlining.append(name)
        self._enter(it)
        try:
            ret = self.type_(d.children[2]) if d.children[2] is not None else None
            body = self.expr(d.children[3], inner, ret)
            if ret is not None:
                body = self.coerce(body, ret, d.children[3])
        finally:
            self.inlining.pop()
            self._file, self._text = saved
        typ = ret if ret is not None else body.type
        # A declared result type is a promise: what the checker cannot prove is checked when
        # the def is evaluated (a spec bug otherwise, reported with the def's span).
        check = ret if ret is not None and _needs_bounds(body.type, ret) else None
        self._bodies[key] = (body, tuple(slots), base0, sc.frame.size - base0, typ, check)
        return ir.Call(typ, sp, name, tuple(args), tuple(slots), body, check)

    # ---- quantifiers and domains ------------------------------------------------------------

    def domain(self, t, sc: Scope, allow_subbags: bool = False) -> ir.Domain:
        sp = self._span(t)
        if t.data == "range_domain":
            lo, hi = self.int_expr(t.children[0], sc), self.int_expr(t.children[1], sc)
            return ir.RangeDomain(IntT(lo.type.lo, max(lo.type.lo, hi.type.hi)), sp, lo, hi)
        if t.data == "var":
            name = str(t.children[0])
            if name not in sc.names:
                v = self.static_value(name, t)
                if v is not None and v[0] == "type":
                    if not is_finite(v[1]):
                        raise self.err(t, f"cannot range over {v[1]}: not a finite type")
                    return ir.TypeDomain(v[1], sp)
        if t.data == "call_expr" and str(t.children[0]) == "subbags":
            if not allow_subbags:
                raise self.err(t, "`subbags(...)` is only a domain of `choose`")
            args = t.children[1].children if t.children[1] is not None else []
            if len(args) != 1:
                raise self.err(t, "subbags takes one bag")
            b = self.expr(args[0], sc)
            if not isinstance(b.type, BagT):
                raise self.err(args[0], f"subbags needs a bag, not {b.type}")
            return ir.SubbagDomain(b.type, sp, b)
        c = self.expr(t, sc)
        et = _elem_type(c.type)
        if et is None:
            raise self.err(t, f"cannot range over a {c.type}: use a type, a..b, or a seq, "
                           f"bag or set")
        return ir.CollDomain(et, sp, c)

    def _quant(self, t, sc: Scope, want) -> ir.Expr:
        kind = str(t.children[0].children[0])
        binder, where_t, body_t = t.children[1], t.children[2], t.children[3]
        dom = self.domain(binder.children[1], sc)
        slot = sc.frame.new()
        inner, where = self._bind(binder, dom, slot, where_t, sc)
        sp = self._span(t)
        n = _domain_size(dom)
        if kind in ("forall", "exists"):
            body = self.bool_expr(body_t, inner)
            if kind == "exists":
                self.no_real(body, t, "`exists` over real constraints is a disjunction: only "
                             "`exists real` introduces unknowns, and only `forall` and `and` "
                             "combine their constraints")
            return ir.Quant(BOOL, sp, kind, slot, dom, where, body)
        if kind == "count":
            body = self.bool_expr(body_t, inner)
            self.no_real(body, t, "real constraints cannot escape into `count`")
            return ir.Quant(IntT(0, n), sp, kind, slot, dom, where, body)
        if kind == "table":
            if not isinstance(dom, ir.TypeDomain):
                raise self.err(binder, "`table` ranges over a type")
            body = self.expr(body_t, inner)
            self.no_real(body, t, "real terms cannot escape into a `table`")
            return ir.Quant(MapT(dom.elem, body.type), sp, kind, slot, dom, where, body)
        body = self.expr(body_t, inner)
        if isinstance(body.type, RealT):
            if kind != "sum":
                raise self.err(t, f"real terms cannot escape into `{kind}` (only `sum` adds "
                               f"them)")
            return ir.Quant(REAL, sp, kind, slot, dom, where, body)
        if not isinstance(body.type, IntT):
            raise self.err(body_t, f"expected a number, found {body.type}")
        bt = body.type
        if kind == "sum":
            typ = IntT(min(0, n * bt.lo), max(0, n * bt.hi))
        else:
            typ = IntT(min(bt.lo, 0), max(bt.hi, 0))
        return ir.Quant(typ, sp, kind, slot, dom, where, body)

    def _bind(self, binder, dom: ir.Domain, slot: int, where_t, sc: Scope):
        """The scope inside a binder ``name in dom`` (its local in ``slot``) and its `where`
        filter (None without one), which may not use real unknowns."""
        name = str(binder.children[0])
        inner = sc.bind(name, ir.Local(dom.elem, self._span(binder), name, slot))
        if where_t is None:
            return inner, None
        where = self.bool_expr(where_t, inner)
        self.no_real(where, where_t, "a `where` cannot use real unknowns")
        return inner, where

    def _largest(self, t, sc: Scope) -> ir.Expr:
        """``largest k of { groups }``: k and every value and count are integers; the type is
        0..k·v, v the largest value any item can have (0 when none is above 0)."""
        count_t, *group_ts = [c for c in t.children if c is not None]
        count = self.int_expr(count_t, sc)
        groups, top = [], 0
        for g in group_ts:
            binder, where_t, *gains = g.children
            slot = sc.frame.new()
            inner, dom, where = sc, None, None
            if binder is not None:
                dom = self.domain(binder.children[1], sc)
                inner, where = self._bind(binder, dom, slot, where_t, sc)
            values, times = [], []
            for gain in gains:
                v_t, n_t = gain.children
                v = self.int_expr(v_t, inner)
                n = self.int_expr(n_t, inner) if n_t is not None else None
                values.append(v)
                times.append(n)
                top = max(top, v.type.hi)
            groups.append(ir.ItemGroup(BOOL, self._span(g), slot, dom, where, tuple(values),
                                       tuple(times)))
        return ir.Largest(IntT(0, max(0, count.type.hi) * top), self._span(t), count,
                          tuple(groups))

    # ---- typing helpers ------------------------------------------------------------------

    def join(self, a: Type, b: Type, node) -> Type:
        if isinstance(a, (IntT, RealT)) and isinstance(b, (IntT, RealT)) and REAL in (a, b):
            return REAL
        if isinstance(a, IntT) and isinstance(b, IntT):
            return IntT(min(a.lo, b.lo), max(a.hi, b.hi))
        if isinstance(a, SeqT) and isinstance(b, SeqT):
            return SeqT(self.join(a.elem, b.elem, node), max(a.cap, b.cap))
        if isinstance(a, BagT) and isinstance(b, BagT) and a.elem == b.elem:
            return BagT(a.elem, max(a.most, b.most))
        if isinstance(a, MapT) and isinstance(b, MapT) and a.key == b.key:
            return MapT(a.key, self.join(a.val, b.val, node))
        if a == b:
            return a
        raise self.err(node, f"incompatible types {a} and {b}")

    def coerce(self, e: ir.Expr, want: Type, node) -> ir.Expr:
        """Check that ``e`` may be stored where a ``want`` is expected."""
        if isinstance(e.type, RealT) and not isinstance(want, RealT):
            raise self.err(node, f"a real term cannot leave its `exists real` (expected {want})")
        if not _assignable(e.type, want):
            raise self.err(node, f"expected {want}, found {e.type}")
        return e

    # ---- statements -------------------------------------------------------------------

    def stmts(self, trees, sc: Scope, allow_assign: bool = True) -> tuple[list[ir.Stmt], Scope]:
        out: list[ir.Stmt] = []
        for t in trees:
            sp = self._span(t)
            match t.data:
                case "requires_stmt":
                    name = str(t.children[0])
                    msg = _string(t.children[1]) if t.children[1] is not None else name
                    out.append(ir.Requires(sp, name, msg, self.bool_expr(t.children[2], sc)))
                case "let_stmt":
                    v = self.expr(t.children[1], sc)
                    slot = sc.frame.new()
                    name = str(t.children[0])
                    out.append(ir.LetStmt(sp, slot, v))
                    sc = sc.bind(name, ir.Local(v.type, sp, name, slot))
                case "assign_stmt":
                    if not allow_assign:
                        raise self.err(t, "assignments are not allowed here")
                    out.append(self._assign(t, sc))
                case "if_stmt":
                    out.append(self._if(t, sc, allow_assign))
                case "show_stmt":
                    items = []
                    for i in t.children:
                        if i.data == "show_text":
                            items.append(ir.Text(TextT(), self._span(i), _string(i.children[0])))
                        else:
                            items.append(self.expr(i, sc))
                    out.append(ir.Show(sp, tuple(items)))
                case "do_stmt":
                    out.extend(self._do(t, sc, allow_assign))
                case _:
                    raise self.err(t, f"unsupported statement {t.data}")
        return out, sc

    def _if(self, t, sc: Scope, allow_assign: bool) -> ir.IfStmt:
        cond = self.bool_expr(t.children[0], sc)
        then, _ = self.stmts(t.children[1].children, sc, allow_assign)
        other: list[ir.Stmt] = []
        if t.children[2] is not None:
            e = t.children[2]
            if e.data == "if_stmt":
                other = [self._if(e, sc, allow_assign)]
            else:
                other, _ = self.stmts(e.children, sc, allow_assign)
        return ir.IfStmt(self._span(t), cond, tuple(then), tuple(other))

    def _do(self, t, sc: Scope, allow_assign: bool) -> list[ir.Stmt]:
        name = str(t.children[0])
        args_t = list(t.children[1].children) if t.children[1] is not None else []
        key = ("proc", name)
        if key not in self.items:
            raise self.err(t, f"unknown procedure {name!r}")
        if name in self.inlining:
            raise self.err(t, f"procedure {name} calls itself; procedures may not recurse")
        it = self.items[key]
        d = it.tree
        params = d.children[1].children if d.children[1] is not None else []
        if len(params) != len(args_t):
            raise self.err(t, f"{name} takes {len(params)} argument(s), given {len(args_t)}")
        out: list[ir.Stmt] = []
        inner = Scope({}, sc.frame, sc.old, sc.transition, sc.allow_state)
        saved = self._cur()
        for a, p in zip(args_t, params):
            self._enter(it)
            try:
                pt = self.type_(p.children[1])
            finally:
                self._file, self._text = saved
            v = self.coerce(self.expr(a, sc, pt), pt, a)
            slot = sc.frame.new()
            out.append(ir.LetStmt(self._span(a), slot, v))
            inner = inner.bind(str(p.children[0]), ir.Local(pt, self._span(a), str(p.children[0]),
                                                            slot))
        self.inlining.append(name)
        body: list[ir.Stmt] = []
        try:
            # A proc's `extend ... before` blocks run ahead of its body, the others after it;
            # all see the proc's parameters.
            parts = ([x for x in it.extra if self._ext_before(x)] + [it]
                     + [x for x in it.extra if not self._ext_before(x)])
            for part in parts:
                self._enter(part)
                block = d.children[2] if part is it else self._ext_block(part)
                more, inner = self.stmts(block.children, inner, allow_assign)
                body.extend(more)
        finally:
            self.inlining.pop()
            self._file, self._text = saved
        return out + body

    def _assign(self, t, sc: Scope) -> ir.Assign:
        lv, op_t, val_t = t.children
        name = str(lv.children[0])
        sp = self._span(t)
        assert self.state_type is not None
        fi = self.state_type.index(name)
        if fi is None:
            raise self.err(lv, f"{name!r} is not a state field; only the state can be assigned")
        typ = self.state_type.fields[fi][1]
        path: list = [ir.PathField(fi, self.state_type)]
        read: ir.Expr = ir.Field(typ, sp, ir.StateRef(self.state_type, sp), fi, name)
        for acc in lv.children[1:]:
            if acc.data == "lv_field":
                fname = str(acc.children[0])
                if not isinstance(typ, RecordT) or typ.index(fname) is None:
                    raise self.err(acc, f"{typ} has no field {fname!r}")
                i = typ.index(fname)
                path.append(ir.PathField(i, typ))
                typ = typ.fields[i][1]
                read = ir.Field(typ, sp, read, i, fname)
            else:
                match typ:
                    case MapT(key=k, val=v):
                        key = self.coerce(self.expr(acc.children[0], sc, k), k, acc)
                        path.append(ir.PathIndex(key, typ))
                        typ = v
                    case BagT(elem=e, most=m):
                        key = self.coerce(self.expr(acc.children[0], sc, e), e, acc)
                        path.append(ir.PathIndex(key, typ))
                        typ = IntT(0, m)
                    case SetT(elem=e):
                        key = self.coerce(self.expr(acc.children[0], sc, e), e, acc)
                        path.append(ir.PathIndex(key, typ))
                        typ = BOOL
                    case SeqT(elem=e):
                        key = self.int_expr(acc.children[0], sc)
                        path.append(ir.PathIndex(key, typ))
                        typ = e
                    case _:
                        raise self.err(acc, f"cannot index a {typ}")
                read = ir.Index(typ, sp, read, key)
        op = str(op_t.children[0])
        value = self.expr(val_t, sc, typ)
        if op != "=":
            if not isinstance(typ, IntT) or not isinstance(value.type, IntT):
                if not (isinstance(typ, BagT) and isinstance(value.type, BagT)):
                    raise self.err(t, f"`{op}` needs numbers or bags")
            vt = value.type
            if isinstance(typ, IntT):
                rt = (IntT(typ.lo + vt.lo, typ.hi + vt.hi) if op == "+=" else
                      IntT(typ.lo - vt.hi, typ.hi - vt.lo))
            else:
                rt = BagT(typ.elem, typ.most + (vt.most if op == "+=" else 0))
            value = ir.Binary(rt, sp, op[0], read, value)
        value = self.coerce(value, typ, val_t)
        bag_minus = isinstance(value, ir.Binary) and value.op == "-" and isinstance(typ, BagT)
        bounds = typ if (_needs_bounds(value.type, typ) or bag_minus) else None
        return ir.Assign(sp, name, tuple(path), value, bounds, value.type)

    # ---- the program ---------------------------------------------------------------------

    @gc_paused()
    def program(self) -> ir.Program:
        # Static declarations first, in order (parameters before the types that use them).
        for key in self.order:
            if key[0] == "static":
                self.static_value(key[1], self.items[key].tree)
        self._state()
        types = {k[1]: v[1] for k in self.order if k[0] == "static"
                 for v in [self.static[k[1]]] if v[0] == "type"}
        init, init_frame = self._init()
        actions = tuple(self._action(self.items[k]) for k in self.order if k[0] == "action")
        invariants = tuple(self._invariant(self.items[k]) for k in self.order
                           if k[0] == "invariant")
        terminal = self._single("terminal")
        actor = self._single("actor")
        examples = tuple(self._example(self.items[k]) for k in self.order if k[0] == "example")
        puzzles = tuple(self._puzzle(self.items[k]) for k in self.order if k[0] == "puzzle")
        for k in self.order:
            if k[0] == "def":
                self._check_def(self.items[k])
        defs = {k[1]: self.items[k] for k in self.order if k[0] in ("def", "proc")}
        docs = {f"{k[0]}:{k[1]}": self.items[k].doc for k in self.order}
        base = self.files[0]
        return ir.Program(
            name=base.game, title=base.title, files=tuple(f.path for f in self.files),
            params=tuple(self.params), param_values=dict(self.param_values),
            readings=tuple(self.readings.values()), types=types, state=tuple(self.state_fields),
            state_type=self.state_type, init=tuple(init), init_frame=init_frame,
            actions=actions, defs=defs, invariants=invariants, examples=examples,
            puzzles=puzzles, terminal=terminal, actor=actor, docs=docs,
            rotate=self._rotate(types))

    def _rotate(self, types: dict) -> ir.Rotate | None:
        """`rotate Player(piece): f, ...;`: Player a type of the integers from 0, piece a def
        of one Player giving an enum's value, each field a Player or a table keyed by one."""
        it = self.items.get(("rotate", "rotate"))
        if it is None:
            return None
        self._enter(it)
        type_t, def_t, *field_ts = it.tree.children
        pt = types.get(str(type_t))
        if not isinstance(pt, IntT) or pt.lo != 0 or pt.hi < 1:
            raise self.err(type_t, f"`rotate {type_t}`: {type_t} must be a `type` of the "
                           f"integers from 0 (the players), at least two of them")
        d = self.items.get(("def", str(def_t)))
        params = [] if d is None or d.tree.children[1] is None else d.tree.children[1].children
        if d is not None:
            self._enter(d)
            ptypes = [self.type_(p.children[1]) for p in params]
            ret = self.type_(d.tree.children[2]) if d.tree.children[2] is not None else None
            self._enter(it)
        if d is None or ptypes != [pt] or not isinstance(ret, EnumT):
            raise self.err(def_t, f"`rotate {type_t}({def_t})`: {def_t} must be a def of one "
                           f"{type_t} whose type is an enum (the players' pieces)")
        state = dict(self.state_type.fields)
        names = []
        for f in field_ts:
            ft = state.get(str(f))
            if ft is None:
                raise self.err(f, f"`rotate`: no state field named {str(f)!r}")
            if ft != pt and not (isinstance(ft, MapT) and ft.key == pt):
                raise self.err(f, f"`rotate`: state field {str(f)!r} is neither a {type_t} nor "
                               f"a table keyed by {type_t} (it is {ft})")
            if str(f) in names:
                raise self.err(f, f"`rotate`: {str(f)!r} is named twice")
            names.append(str(f))
        return ir.Rotate(str(type_t), pt.hi + 1, ret.name, str(def_t), tuple(names),
                         self._span(it.tree))

    def _check_def(self, it: Item) -> None:
        """Type-check a def's body on its own (calls check it again where they inline it)."""
        self._enter(it)
        d = it.tree
        frame = Frame()
        sc = Scope({}, frame)
        for p in (d.children[1].children if d.children[1] is not None else []):
            pt = self.type_(p.children[1])
            sc = sc.bind(str(p.children[0]), ir.Local(pt, self._span(p), str(p.children[0]),
                                                      frame.new()))
        ret = self.type_(d.children[2]) if d.children[2] is not None else None
        self.inlining.append(it.name)
        try:
            body = self.expr(d.children[3], sc, ret)
        finally:
            self.inlining.pop()
        if ret is not None:
            self.coerce(body, ret, d.children[3])

    def _state(self) -> None:
        it = self.items.get(("state", "state"))
        if it is None:
            raise SpecError("the game declares no `state { ... }`", Span(self.files[0].path, 1, 1))
        fields = []
        seen: dict[str, Span] = {}
        for part in [it, *it.extra]:
            self._enter(part)
            for f in part.tree.children:
                doc_t, name_t, type_t = f.children
                doc = ir.Doc(_string(doc_t.children[0]),
                             _string(doc_t.children[1]) if doc_t.children[1] else "") \
                    if doc_t is not None else ir.Doc()
                name = str(name_t)
                if name in seen:
                    raise self.err(name_t, f"state field {name!r} is already declared at "
                                   f"{seen[name]}")
                seen[name] = self._span(name_t)
                typ = self.type_(type_t)
                fields.append(ir.StateFieldDecl(name, typ, doc, self._span(f)))
        self.state_fields = fields
        self.state_type = RecordT("State", tuple((f.name, f.type) for f in fields))

    def _init(self) -> tuple[list[ir.Stmt], int]:
        frame = Frame()
        out: list[ir.Stmt] = []
        it = self.items.get(("init", "init"))
        if it is None:
            return out, 0
        for part in [it, *it.extra]:
            self._enter(part)
            block = part.tree.children[0] if part is it else self._ext_block(part)
            body, _ = self.stmts(block.children, Scope({}, frame))
            out.extend(body)
        return out, frame.size

    def _single(self, kind: str):
        it = self.items.get((kind, kind))
        if it is None:
            return None
        self._enter(it)
        return self.expr(it.tree.children[0], Scope({}, Frame()))

    def _action(self, it: Item) -> ir.Action:
        self._enter(it)
        t = it.tree
        kind = str(t.children[0].children[0])
        name = str(t.children[1])
        frame = Frame()
        sc = Scope({}, frame)
        binders = []
        for b in (t.children[2].children if t.children[2] is not None else []):
            dom = self.domain(b.children[1], sc)
            slot = frame.new()
            bn = str(b.children[0])
            binders.append(ir.Binder(bn, slot, dom))
            sc = sc.bind(bn, ir.Local(dom.elem, self._span(b), bn, slot))
        weight = None
        if t.children[3] is not None:
            if kind != "chance":
                raise self.err(t.children[3], "only a `chance` action has a weight")
            weight = self.int_expr(t.children[3], sc)
        # `extend a before` blocks run first, in file order, and their lets are visible to the
        # body; the other `extend` blocks are appended after it.
        body: list[ir.Stmt] = []
        sc2 = sc
        before = [x for x in it.extra if self._ext_before(x)]
        for ext in before:
            self._enter(ext)
            more, sc2 = self.stmts(self._ext_block(ext).children, sc2)
            body.extend(more)
        self._enter(it)
        more, sc2 = self.stmts(t.children[4].children, sc2)
        body.extend(more)
        source = "\n".join([self._source(x) for x in before] + [self._source(it)])
        for ext in it.extra:
            if self._ext_before(ext):
                continue
            self._enter(ext)
            more, sc2 = self.stmts(self._ext_block(ext).children, sc2)
            body.extend(more)
            source += "\n" + self._source(ext)
        return ir.Action(name, kind == "chance", tuple(binders), weight, tuple(body), frame.size,
                         it.doc, self._span(t, it.file), source)

    def _invariant(self, it: Item) -> ir.Invariant:
        self._enter(it)
        frame = Frame()
        trans = it.tree.data == "transition_decl"
        e = self.bool_expr(it.tree.children[1], Scope({}, frame, transition=trans))
        return ir.Invariant(it.name, e, frame.size, trans, it.doc, self._span(it.tree),
                            self._source(it))

    def _action_call(self, t, sc: Scope) -> ir.ActionCall:
        name = str(t.children[0])
        args_t = list(t.children[1].children) if t.children[1] is not None else []
        key = ("action", name)
        if key not in self.items:
            raise self.err(t, f"unknown action {name!r}")
        a = self._action_sig(name)
        if len(a) != len(args_t):
            raise self.err(t, f"{name} takes {len(a)} argument(s), given {len(args_t)}")
        args = tuple(self.coerce(self.expr(x, sc, pt), pt, x) for x, pt in zip(args_t, a))
        return ir.ActionCall(name, args, self._span(t))

    def _action_sig(self, name: str) -> list[Type]:
        it = self.items[("action", name)]
        saved = self._cur()
        self._enter(it)
        try:
            sc = Scope({}, Frame())
            out = []
            for b in (it.tree.children[2].children if it.tree.children[2] is not None else []):
                dom = self.domain(b.children[1], sc)
                out.append(dom.elem)
                sc = sc.bind(str(b.children[0]), ir.Local(dom.elem, Span("", 0, 0),
                                                          str(b.children[0]), 0))
            return out
        finally:
            self._file, self._text = saved

    def _example(self, it: Item) -> ir.Example:
        self._enter(it)
        frame = Frame()
        sc = Scope({}, frame)
        setup: list[ir.Stmt] = []
        script: list = []
        with_ = it.tree.children[1]
        settings_l: list[tuple[str, int]] = []
        chosen: list[tuple[str, str]] = []
        for ps in (with_.children if with_ is not None else []):
            pname, val = str(ps.children[0]), ps.children[1]
            if val.type == "INT":
                if pname not in self.param_values:
                    raise self.err(ps, f"{pname!r} is not a parameter of the game")
                settings_l.append((pname, int(val)))
                continue
            # `with reading = option`: the example runs under that reading.
            self.static_value(pname, ps)
            r = self.readings.get(pname)
            if r is None:
                raise self.err(ps, f"{pname!r} is not a reading of the game (`with` sets a "
                               f"parameter to a number or a reading to one of its options)")
            if str(val) not in [o for o, _ in r.options]:
                raise self.err(val, f"reading {pname} has no option {str(val)!r} (options: "
                               f"{', '.join(o for o, _ in r.options)})")
            chosen.append((pname, str(val)))
        settings = tuple(settings_l)
        for c in it.tree.children[2:]:
            self._enter(it)
            match c.data:
                case "from_clause":
                    body, sc = self.stmts(c.children[0].children, sc)
                    setup.extend(body)
                case "do_clause":
                    script.extend(self._action_call(x, sc) for x in c.children)
                case "expect_value":
                    script.append(ir.Expect("value", self.bool_expr(c.children[0], sc), None,
                                             None, self._span(c), self._slice(c)))
                case "expect_legal":
                    script.append(ir.Expect("legal", None, self._action_call(c.children[0], sc),
                                             None, self._span(c), self._slice(c)))
                case "expect_illegal":
                    because = str(c.children[1]) if c.children[1] is not None else None
                    script.append(ir.Expect("illegal", None,
                                             self._action_call(c.children[0], sc), because,
                                             self._span(c), self._slice(c)))
        return ir.Example(it.name, tuple(setup), tuple(script), frame.size, settings, it.doc,
                          self._span(it.tree), tuple(chosen))

    def _slice(self, node) -> str:
        m = node.meta
        return self._cur()[1][m.start_pos:m.end_pos] if not m.empty else ""

    def _puzzle(self, it: Item) -> ir.Puzzle:
        self._enter(it)
        frame = Frame()
        sc = Scope({}, frame)
        inputs: list[ir.PuzzleInput] = []
        checks: list[ir.Check] = []
        queries: list[ir.Query] = []
        # `extend puzzle` adds inputs and checks, and `using`/`from` items to every query.  The
        # queries are compiled last so that they see every input, the extension's included.
        clauses = [(it, c) for c in it.tree.children[1:]]
        clauses += [(x, c) for x in it.extra for c in x.tree.children[1:]
                    if c.data in ("input_clause", "puzzle_check")]
        extra_items = [(x, c, None) for x in it.extra for c in x.tree.children[1:]
                       if c.data in ("using_item", "from_clause")]
        base_whens = {str(c.children[0]) if c.children[0] is not None else None
                      for c in it.tree.children[1:] if c.data == "query_clause"}
        for x in it.extra:
            for c in x.tree.children[1:]:
                if c.data != "query_clause":
                    continue
                when = str(c.children[0]) if c.children[0] is not None else None
                if when not in base_whens:
                    self._enter(x)
                    raise self.err(c, f"`extend puzzle {it.name}`: the puzzle has no query "
                                   + (f"`when {when}`" if when else "without `when`"))
                for q in c.children[1:]:
                    if q.data not in ("using_item", "from_clause"):
                        self._enter(x)
                        raise self.err(q, "an `extend puzzle` query adds only `using` and "
                                       "`from` items")
                    extra_items.append((x, q, ("when", when)))
        clauses.sort(key=lambda pc: pc[1].data == "query_clause")
        for part, c in clauses:
            self._enter(part)
            match c.data:
                case "input_clause":
                    name = str(c.children[0])
                    typ = self.type_(c.children[1])
                    dflt_kind = c.children[2]
                    dflt = None
                    if c.children[3] is not None:
                        dflt = self.coerce(self.expr(c.children[3], sc, typ), typ, c.children[3])
                    slot = frame.new()
                    is_param = name in self.param_values
                    sc = sc.bind(name, ir.Local(typ, self._span(c), name, slot))
                    ichecks = tuple(self._check(x, sc) for x in c.children[4:])
                    optional = dflt_kind is not None and str(dflt_kind.children[0]) == "?="
                    inputs.append(ir.PuzzleInput(name, typ, dflt, optional, is_param, slot,
                                                 ichecks, self._span(c)))
                case "puzzle_check":
                    checks.append(self._check(c.children[0], sc))
                case "query_clause":
                    when = str(c.children[0]) if c.children[0] is not None else None
                    mine = [(x, q) for x, q, w in extra_items if w is None or w == ("when", when)]
                    queries.append(self._query(c, sc, inputs, mine))
                    self._enter(it)
        return ir.Puzzle(it.name, tuple(inputs), tuple(checks), tuple(queries), frame.size,
                         it.doc, self._span(it.tree))

    def _check(self, c, sc: Scope) -> ir.Check:
        return ir.Check(str(c.children[0]), _string(c.children[1]),
                        self.bool_expr(c.children[2], sc), self._span(c))

    def _query(self, c, sc: Scope, inputs, extra_items=()) -> ir.Query:
        when = str(c.children[0]) if c.children[0] is not None else None
        if when is not None and when not in {i.name for i in inputs if i.optional}:
            raise self.err(c, f"`when {when}` must name an optional input (declared with ?=)")
        choose = None
        setup: list[ir.Stmt] = []
        goal = maximize = within = bound = None
        answers: list[tuple[str, str]] = []
        using: list[str] = []
        pins: list = []
        owner = self._cur()
        items = [(None, q) for q in c.children[1:]] + list(extra_items)
        for part, q in items:
            if part is not None:
                self._enter(part)
            else:
                self._file, self._text = owner
            match q.data:
                case "choose_item":
                    dom = self.domain(q.children[1], sc, allow_subbags=True)
                    slot = sc.frame.new()
                    name = str(q.children[0])
                    choose = ir.Binder(name, slot, dom)
                    sc = sc.bind(name, ir.Local(dom.elem, self._span(q), name, slot))
                case "from_clause":
                    body, sc = self.stmts(q.children[0].children, sc)
                    setup.extend(body)
                case "goal_item":
                    goal = self.bool_expr(q.children[0], sc)
                case "maximize_item":
                    maximize = self.int_expr(q.children[0], sc)
                case "bound_item":
                    bound = (self.int_expr(q.children[0], sc), q)
                case "within_item":
                    within = self.int_expr(q.children[0], sc)
                case "answer_item":
                    answers.append((str(q.children[0]), str(q.children[1].children[0])))
                case "using_item":
                    for u in q.children:
                        n = u.children[0]
                        if ("action", str(n)) not in self.items:
                            raise self.err(n, f"unknown action {str(n)!r}")
                        using.append(str(n))
                        if u.children[1] is not None:
                            pins.append((str(n), self._pins(u, sc)))
        if goal is None or within is None:
            raise self.err(c, "a query needs `goal:` and `within:`")
        if bound is not None and maximize is None:
            raise self.err(bound[1], "`bound:` bounds the objective: it needs `maximize:`")
        return ir.Query(when, choose, tuple(setup), goal, maximize, within, tuple(answers),
                        tuple(using), self._span(c), bound[0] if bound else None, tuple(pins))

    def _pins(self, u, sc: Scope) -> tuple:
        """`using move(piece, _)`: the value each argument of the action must equal, or None
        for `_` (any).  The values are read on the query's start, not on the state a move
        is made from."""
        name = str(u.children[0])
        args_t = list(u.children[1].children)
        sig = self._action_sig(name)
        if len(sig) != len(args_t):
            raise self.err(u, f"{name} takes {len(sig)} argument(s), given {len(args_t)}")
        if all(self._is_any(x) for x in args_t):
            raise self.err(u, f"`using {name}(_, ...)` pins no argument: write `using {name}`")
        return tuple(None if self._is_any(x) else self.coerce(self.expr(x, sc, pt), pt, x)
                     for x, pt in zip(args_t, sig))

    @staticmethod
    def _is_any(t) -> bool:
        return getattr(t, "data", None) == "var" and str(t.children[0]) == "_"


def _json_spellings(ck: "Checker", members) -> tuple:
    """Each member's JSON spelling (`red = 0`), or () when no member names one."""
    if all(m.children[1] is None for m in members):
        return ()
    out, seen = [], {}
    for m in members:
        sp = m.children[1]
        if sp is None:
            v = str(m.children[0])
        elif sp.data == "json_string":
            v = _string(sp.children[0])
        elif sp.data == "json_int":
            v = int(sp.children[0])
        else:
            v = None
        key = (type(v).__name__, v)
        if key in seen:
            raise ck.err(m, f"{str(m.children[0])!r} has the same JSON spelling as "
                         f"{seen[key]!r}")
        seen[key] = str(m.children[0])
        out.append(v)
    return tuple(out)


# ---- builtins ------------------------------------------------------------------------------

def _b_seq_arg(ck: Checker, t, args_t, sc, n: int, name: str):
    if len(args_t) != n:
        raise ck.err(t, f"{name} takes {n} argument(s), given {len(args_t)}")
    s = ck.expr(args_t[0], sc)
    if not isinstance(s.type, SeqT):
        raise ck.err(args_t[0], f"{name} needs a seq, not {s.type}")
    return s


def _b_len(ck, t, args_t, sc, want):
    s = _b_seq_arg(ck, t, args_t, sc, 1, "len")
    return ir.Builtin(IntT(0, s.type.cap), ck._span(t), "len", (s,))


def _b_elem(name):
    def f(ck, t, args_t, sc, want):
        s = _b_seq_arg(ck, t, args_t, sc, 1, name)
        return ir.Builtin(s.type.elem, ck._span(t), name, (s,))
    return f


def _b_push(name):
    def f(ck, t, args_t, sc, want):
        s = _b_seq_arg(ck, t, args_t, sc, 2, name)
        x = ck.coerce(ck.expr(args_t[1], sc, s.type.elem), s.type.elem, args_t[1])
        # One longer than its argument: storing it back checks the capacity (`bounds`).
        return ir.Builtin(SeqT(s.type.elem, s.type.cap + 1), ck._span(t), name, (s, x))
    return f


def _b_pop(name):
    def f(ck, t, args_t, sc, want):
        s = _b_seq_arg(ck, t, args_t, sc, 1, name)
        return ir.Builtin(s.type, ck._span(t), name, (s,))
    return f


def _b_size(ck, t, args_t, sc, want):
    if len(args_t) != 1:
        raise ck.err(t, "size takes one bag or set")
    b = ck.expr(args_t[0], sc)
    if isinstance(b.type, BagT):
        return ir.Builtin(IntT(0, b.type.most * finite(b.type.elem).size), ck._span(t), "size",
                          (b,))
    if isinstance(b.type, SetT):
        return ir.Builtin(IntT(0, finite(b.type.elem).size), ck._span(t), "size", (b,))
    raise ck.err(args_t[0], f"size needs a bag or set, not {b.type}")


def _b_old(ck, t, args_t, sc, want):
    if not sc.transition:
        raise ck.err(t, "`old(...)` is only meaningful in a `transition` property")
    if len(args_t) != 1:
        raise ck.err(t, "old takes one expression")
    inner = Scope(sc.names, sc.frame, True, False, sc.allow_state)
    return ck.expr(args_t[0], inner, want)


def _b_minmax(name):
    def f(ck, t, args_t, sc, want):
        if len(args_t) != 2:
            raise ck.err(t, f"{name} takes two numbers")
        a, b = ck.int_expr(args_t[0], sc), ck.int_expr(args_t[1], sc)
        x, y = a.type, b.type
        typ = IntT(min(x.lo, y.lo), min(x.hi, y.hi)) if name == "least" else \
            IntT(max(x.lo, y.lo), max(x.hi, y.hi))
        return ir.Builtin(typ, ck._span(t), name, (a, b))
    return f


def _b_abs(ck, t, args_t, sc, want):
    if len(args_t) != 1:
        raise ck.err(t, "abs takes one number")
    a = ck.int_expr(args_t[0], sc)
    m = max(abs(a.type.lo), abs(a.type.hi))
    lo = 0 if a.type.lo <= 0 <= a.type.hi else min(abs(a.type.lo), abs(a.type.hi))
    return ir.Builtin(IntT(lo, m), ck._span(t), "abs", (a,))


def _b_grid_region(ck, t, sc, name):
    ok = ck.expr(t, sc)
    if not regions.is_grid_region(ok.type):
        raise ck.err(t, f"{name} needs a map from grid squares (a record of two integer fields) "
                        f"to bool, not {ok.type}")
    return ok


def _b_component(ck, t, args_t, sc, want):
    if len(args_t) != 2:
        raise ck.err(t, "component takes a square and a region: component(seed, ok)")
    ok = _b_grid_region(ck, args_t[1], sc, "component")
    seed = ck.expr(args_t[0], sc)
    if seed.type != ok.type.key:
        raise ck.err(args_t[0], f"component's seed must be a {ok.type.key}, not {seed.type}")
    return ir.Builtin(ok.type, ck._span(t), "component", (seed, ok))


def _b_components(ck, t, args_t, sc, want):
    if len(args_t) != 1:
        raise ck.err(t, "components takes one region: components(ok)")
    ok = _b_grid_region(ck, args_t[0], sc, "components")
    return ir.Builtin(IntT(0, finite(ok.type.key).size), ck._span(t), "components", (ok,))


def _b_subbags(ck, t, args_t, sc, want):
    raise ck.err(t, "`subbags(...)` is only a domain of `choose`")


BUILTINS = {
    "len": _b_len,
    "top": _b_elem("top"),
    "bottom": _b_elem("bottom"),
    "push": _b_push("push"),
    "push_bottom": _b_push("push_bottom"),
    "pop": _b_pop("pop"),
    "pop_bottom": _b_pop("pop_bottom"),
    "size": _b_size,
    "old": _b_old,
    "least": _b_minmax("least"),
    "most": _b_minmax("most"),
    "abs": _b_abs,
    "component": _b_component,
    "components": _b_components,
    "subbags": _b_subbags,
}


# ---- type relations ---------------------------------------------------------------------------

def _elem_type(t: Type) -> Type | None:
    match t:
        case SeqT(elem=e) | BagT(elem=e) | SetT(elem=e):
            return e
    return None


def _comparable(a: Type, b: Type) -> bool:
    if isinstance(a, IntT) and isinstance(b, IntT):
        return True
    if isinstance(a, SeqT) and isinstance(b, SeqT):
        return _comparable(a.elem, b.elem)
    if isinstance(a, BagT) and isinstance(b, BagT):
        return a.elem == b.elem
    if isinstance(a, MapT) and isinstance(b, MapT):
        return a.key == b.key and _comparable(a.val, b.val)
    return a == b


def _assignable(src: Type, dst: Type) -> bool:
    match (src, dst):
        case (IntT(), IntT()):
            return True
        case (SeqT(), SeqT()):
            return _assignable(src.elem, dst.elem)
        case (BagT(), BagT()):
            return src.elem == dst.elem
        case (MapT(), BagT()):
            return src.key == dst.elem and isinstance(src.val, IntT)
        case (MapT(), MapT()):
            return src.key == dst.key and _assignable(src.val, dst.val)
    return src == dst


def _needs_bounds(src: Type, dst: Type) -> bool:
    """Whether a runtime bounds check is needed to store a ``src`` value into ``dst``."""
    match (src, dst):
        case (IntT(), IntT()):
            return src.lo < dst.lo or src.hi > dst.hi
        case (SeqT(), SeqT()):
            return src.cap > dst.cap or _needs_bounds(src.elem, dst.elem)
        case (BagT(), BagT()):
            return src.most > dst.most
        case (MapT(), BagT()):
            return src.val.lo < 0 or src.val.hi > dst.most
        case (MapT(), MapT()):
            return _needs_bounds(src.val, dst.val)
    return False


def _domain_size(d: ir.Domain) -> int:
    match d:
        case ir.TypeDomain(elem=e):
            return cardinality(e)
        case ir.RangeDomain(elem=e):
            return max(0, e.hi - e.lo + 1)
        case ir.CollDomain(coll=c):
            t = c.type
            if isinstance(t, SeqT):
                return t.cap
            return finite(t.elem).size
        case ir.SubbagDomain():
            return 1
    raise AssertionError(d)


def _fits(value, t: Type) -> bool:
    if isinstance(t, IntT):
        return isinstance(value, int) and t.lo <= value <= t.hi
    return True
