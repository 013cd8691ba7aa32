"""Declarations: gather each file's items (with `override` and `extend`), resolve the static
ones (parameters, enums, types, records, constants, readings) and the written types (a mixin of
`check.Checker`)."""
from __future__ import annotations

from dataclasses import dataclass, field

from lark import Tree

from . import ir
from .errors import SpecError, VariantError
from .scope import Frame, Scope
from .sources import string
from .types import (BOOL, BagT, EnumT, IntT, MapT, RecordT, SeqT, SetT, Type, cardinality,
                    is_finite, param_fits)


@dataclass
class Item:
    """One declaration of a spec, with the file it is written in."""

    kind: str
    name: str
    tree: Tree
    doc: ir.Doc
    file: str
    text: str
    override: bool = False
    extra: list = field(default_factory=list)  # `extend` blocks appended to an action / init


class DeclChecks:
    """The declarations of `Checker`: `items` by (kind, name), statics resolved on demand."""

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
                    doc = ir.Doc(string(doc_t.children[0]),
                                 string(doc_t.children[1]) if doc_t.children[1] else "")
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
                                       f"{self.span(prev.tree, prev.file)}; write `override` "
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
    def ext_before(ext: Item) -> bool:
        """Whether an `extend` block runs ahead of the body it extends (`before`)."""
        w = ext.tree.children[1] if ext.tree.data == "extend_decl" else None
        return w is not None and str(w.children[0]) == "before"

    @staticmethod
    def ext_block(ext: Item):
        return ext.tree.children[-1]

    def _decl_name(self, decl: Tree, kind: str) -> str:
        if kind in ("state", "init", "terminal", "actor", "rotate"):
            return kind
        if decl.data == "action_decl":
            return str(decl.children[1])
        return str(decl.children[0])

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
        saved = self.cursor()
        it = self.items[key]
        self.enter(it)
        try:
            value = self._resolve_static(it)
        finally:
            self.goto(saved)
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
                if not param_fits(value, typ):
                    raise self.err(t, f"parameter {it.name} = {value!r} is outside {typ}")
                self.params.append(ir.Param(it.name, typ, dflt, it.doc, self.span(t)))
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
                return ("value", e.type, self.eval_const(e, t))
            case "reading_decl":
                opts = tuple((str(o.children[0]), string(o.children[1])) for o in t.children[2:])
                names = [o for o, _ in opts]
                dflt = str(t.children[1])
                if dflt not in names:
                    raise self.err(t.children[1], f"default {dflt!r} is not one of the readings "
                                   f"{', '.join(names)}")
                chosen = self.reading_choices.get(it.name, dflt)
                if chosen not in names:
                    raise VariantError(f"variant '{it.name}:{chosen}': reading {it.name!r} has "
                                       f"no option {chosen!r} (options: {', '.join(names)})",
                                       it.name)
                et = EnumT(it.name, tuple(names))
                for i, m in enumerate(names):
                    self._add_member(m, et, i, t)
                self.readings[it.name] = ir.ReadingDecl(it.name, opts, dflt, chosen, it.doc,
                                                        self.span(t))
                return ("value", et, names.index(chosen))
        raise AssertionError(t.data)

    def _add_member(self, m: str, et: EnumT, i: int, node) -> None:
        if m in self.enum_members and self.enum_members[m][0] != et:
            raise self.err(node, f"{m!r} names a value of both {self.enum_members[m][0]} and "
                           f"{et}; enum values must be unique")
        self.enum_members[m] = (et, i)

    def const_eval(self, tree, sc: Scope):
        e = self.expr(tree, sc)
        return self.eval_const(e, tree)

    def eval_const(self, e: ir.Expr, node):
        try:
            return self.const_value(e)
        except SpecError:
            raise
        except Exception as ex:  # a constant must not read the state or fail
            raise self.err(node, f"not a constant: {ex}") from None

    def lookup_enum_member(self, name: str):
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
                self.need_finite(elem, t)
                return BagT(elem, n)
            case "map_type":
                k = self.type_(t.children[0])
                self.need_finite(k, t)
                return MapT(k, self.type_(t.children[1]))
            case "set_type":
                e = self.type_(t.children[0])
                self.need_finite(e, t)
                return SetT(e)
        raise AssertionError(t.data)

    def need_finite(self, t: Type, node) -> None:
        if not is_finite(t) or cardinality(t) > 4096:
            raise self.err(node, f"{t} cannot be a key: keys must be small finite types "
                           f"(enums, ranges, records of them)")


def _json_spellings(ck, members) -> tuple:
    """Each member's JSON spelling (`red = 0`), or () when no member names one."""
    if all(m.children[1] is None for m in members):
        return ()
    out, seen = [], {}
    for m in members:
        sp = m.children[1]
        if sp is None:
            v = str(m.children[0])
        elif sp.data == "json_string":
            v = string(sp.children[0])
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
