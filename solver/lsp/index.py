"""What every name of a parsed `.rules` file is: its declarations (globals, and the locals of
each unit) and, for every name written, the declaration it stands for.

Names resolve as the checker resolves them (docs/language.md §1.3): a local first (a binder,
a parameter, a `let`, a puzzle input), then a state field, a static declaration (param,
const, type, enum, record, reading), an enum value or reading option.  A call names a
builtin, a record or a def; `do` a proc; an example's and a query's moves name actions.
Nothing here needs the checker: a file with type errors is still indexed, and a file that
extends another is indexed with the names its bases declare."""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from lark import Token, Tree

from ..lang.builtins import BUILTINS
from ..lang.sources import SourceFile, string

# A range: 0-based line and column of the start and of the end (exclusive).
Range = tuple[int, int, int, int]
# What a name stands for: (namespace, name); locals are ("local", "file:line:col").
Key = tuple[str, str]

# The namespaces of the global declarations, by declaration node.
_KINDS = {
    "param_decl": ("static", "param"), "enum_decl": ("static", "enum"),
    "type_decl": ("static", "type"), "record_decl": ("static", "record"),
    "const_decl": ("static", "const"), "reading_decl": ("static", "reading"),
    "def_decl": ("def", "def"), "proc_decl": ("proc", "proc"),
    "action_decl": ("action", "action"), "invariant_decl": ("invariant", "invariant"),
    "transition_decl": ("invariant", "transition"), "example_decl": ("example", "example"),
    "puzzle_decl": ("puzzle", "puzzle"),
}


@dataclass
class Decl:
    """A declaration: what a name stands for."""

    key: Key
    kind: str               # in words: "def", "state field", "enum value", "local"...
    name: str
    file: str
    name_range: Range
    range: Range            # the whole declaration
    signature: str          # its head as written (`def f(x: T): R`, `hand: bag[Card, 3]`)
    doc: str = ""
    ref: str = ""           # where the rulebook says it (`doc "..." @ "..."`)
    container: str = ""     # the enum, record, reading or unit it belongs to
    override: bool = False
    scope: Range | None = None  # a local: where it can be read

    def __reduce__(self):
        # Pickled as its fields (the checking process sends indexes of 100,000 names): a
        # fifth of the default's cost to unpickle.
        return Decl, (self.key, self.kind, self.name, self.file, self.name_range, self.range,
                      self.signature, self.doc, self.ref, self.container, self.override,
                      self.scope)


@dataclass
class Occurrence:
    key: Key
    range: Range
    is_decl: bool

    def __reduce__(self):
        return Occurrence, (self.key, self.range, self.is_decl)


@dataclass
class FileIndex:
    """The declarations of one file (its globals first, then the locals) and every name written
    in it, by position."""

    file: str
    text: str
    game: str
    base: str | None
    decls: list[Decl] = field(default_factory=list)
    occurrences: list[Occurrence] = field(default_factory=list)
    # Where the occurrences start, for `at` (made on the first call, once they are sorted).
    starts: list[tuple[int, int]] | None = field(default=None, repr=False, compare=False)

    def __reduce__(self):
        return FileIndex, (self.file, self.text, self.game, self.base, self.decls,
                           self.occurrences)

    def at(self, line: int, col: int) -> Occurrence | None:
        """The name written at a 0-based position (its end included: the cursor just after it)."""
        if self.starts is None:
            self.starts = [(o.range[0], o.range[1]) for o in self.occurrences]
        starts = self.starts
        i = bisect_right(starts, (line, col)) - 1
        for o in self.occurrences[max(0, i - 1):i + 1]:
            if (o.range[0], o.range[1]) <= (line, col) <= (o.range[2], o.range[3]):
                return o
        return None

    def globals(self) -> list[Decl]:
        return [d for d in self.decls if d.key[0] != "local"]


def tok_range(tok: Token) -> Range:
    return (tok.line - 1, tok.column - 1, tok.end_line - 1, tok.end_column - 1)


def node_range(t) -> Range:
    if isinstance(t, Token):
        return tok_range(t)
    m = t.meta
    if m.empty:
        return (0, 0, 0, 0)
    return (m.line - 1, m.column - 1, m.end_line - 1, m.end_column - 1)


def declared(files: list[SourceFile]) -> set[Key]:
    """The global names the files declare (state fields, statics, enum values, units...)."""
    out: set[Key] = set()
    for f in files:
        for item in f.tree.children[1:]:
            d = item.children[2]
            if d.data in _KINDS:
                name = d.children[1] if d.data == "action_decl" else d.children[0]
                out.add((_KINDS[d.data][0], str(name)))
            if d.data == "state_decl":
                out.update(("state", str(x.children[-2])) for x in d.children)
            elif d.data == "enum_decl":
                out.update(("member", str(m.children[0])) for m in d.children[1:])
            elif d.data == "reading_decl":
                out.update(("member", str(o.children[0])) for o in d.children[2:])
            elif d.data == "record_decl":
                out.update(("field", str(x.children[0])) for x in d.children[1:])
    return out


class Units:
    """The locals of the units that `extend` blocks add to (an action's binders, a proc's
    parameters, a puzzle's inputs), shared by the indexes of one chain of files."""

    def __init__(self) -> None:
        self.scopes: dict[Key, dict[str, Key]] = {}


def index_file(src: SourceFile, names: set[Key], units: Units | None = None) -> FileIndex:
    """Index ``src``; ``names`` are the globals its chain declares (`declared`)."""
    out = FileIndex(src.path, src.text, src.game, src.base)
    _Walker(src, names, units or Units(), out).run()
    out.occurrences.sort(key=lambda o: o.range)
    return out


class _Walker:
    def __init__(self, src: SourceFile, names: set[Key], units: Units, out: FileIndex):
        self.src, self.names, self.units, self.out = src, names, units, out
        self.unit = ""

    # ---- recording -------------------------------------------------------------------

    def occ(self, tok, key: Key, is_decl: bool = False) -> None:
        if isinstance(tok, Token):
            self.out.occurrences.append(Occurrence(key, tok_range(tok), is_decl))

    def text(self, node) -> str:
        if isinstance(node, Token):
            return str(node)
        m = node.meta
        return "" if m.empty else self.src.text[m.start_pos:m.end_pos]

    def head(self, node, stop) -> str:
        """The text of ``node`` up to the child ``stop`` (its body), without a trailing `=`."""
        m = node.meta
        end = stop.meta.start_pos if isinstance(stop, Tree) else stop.start_pos
        return " ".join(self.src.text[m.start_pos:end].rstrip().rstrip("=").split())

    def decl(self, tok, key: Key, kind: str, node, signature: str, doc=None,
             container: str = "", override: bool = False, scope: Range | None = None) -> None:
        text, ref = ("", "")
        if doc is not None:
            text = string(doc.children[0])
            ref = string(doc.children[1]) if doc.children[1] is not None else ""
        self.out.decls.append(Decl(key, kind, str(tok), self.src.path, tok_range(tok),
                                   node_range(node), signature, text, ref, container, override,
                                   scope))
        self.occ(tok, key, True)

    def bind(self, tok, sc: dict, node, signature: str, scope_node=None) -> dict:
        """A new local ``tok`` in scope ``sc``, visible from ``node`` to the end of
        ``scope_node``."""
        key = ("local", f"{self.src.path}:{tok.line}:{tok.column}")
        r, s = node_range(node), node_range(scope_node if scope_node is not None else node)
        self.decl(tok, key, "local", node, signature, container=self.unit,
                  scope=(r[0], r[1], s[2], s[3]))
        return {**sc, str(tok): key}

    # ---- names -----------------------------------------------------------------------

    def value(self, tok, sc: dict) -> None:
        name = str(tok)
        if name in sc:
            self.occ(tok, sc[name])
            return
        for ns in ("state", "static", "member", "def"):
            if (ns, name) in self.names:
                self.occ(tok, (ns, name))
                return

    def named(self, tok, *namespaces: str) -> None:
        for ns in namespaces:
            if (ns, str(tok)) in self.names:
                self.occ(tok, (ns, str(tok)))
                return

    # ---- declarations ----------------------------------------------------------------

    def run(self) -> None:
        for item in self.src.tree.children[1:]:
            doc, ovr, d = item.children
            self.unit = ""
            getattr(self, "d_" + d.data)(d, doc, ovr is not None)

    def global_decl(self, d, doc, ovr, signature: str) -> None:
        ns, kind = _KINDS[d.data]
        name = d.children[1] if d.data == "action_decl" else d.children[0]
        if d.data == "action_decl":
            kind = str(d.children[0].children[0])
        self.unit = str(name)
        self.decl(name, (ns, str(name)), kind, d, signature, doc, override=ovr)

    def d_param_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, self.text(d).rstrip(";"))
        self.type_(d.children[1])
        self.expr(d.children[2], {})

    def d_const_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, " ".join(self.text(d).split()).rstrip(";"))
        self.expr(d.children[1], {})

    def d_type_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, self.text(d).rstrip(";"))
        self.type_(d.children[1])

    def d_enum_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, " ".join(self.text(d).split()))
        for m in d.children[1:]:
            self.decl(m.children[0], ("member", str(m.children[0])), "enum value", m,
                      f"{d.children[0]}.{m.children[0]}", container=str(d.children[0]))

    def d_record_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, " ".join(self.text(d).split()))
        for f in d.children[1:]:
            self.decl(f.children[0], ("field", str(f.children[0])), "record field", f,
                      self.text(f), container=str(d.children[0]))
            self.type_(f.children[1])

    def d_reading_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, f"reading {d.children[0]} = {d.children[1]}")
        self.named(d.children[1], "member")
        for o in d.children[2:]:
            self.out.decls.append(Decl(("member", str(o.children[0])), "reading option",
                                       str(o.children[0]), self.src.path,
                                       tok_range(o.children[0]), node_range(o),
                                       f"{d.children[0]} = {o.children[0]}",
                                       string(o.children[1]), "", str(d.children[0])))
            self.occ(o.children[0], ("member", str(o.children[0])), True)

    def params(self, d, tp) -> dict:
        sc: dict = {}
        for p in (tp.children if tp is not None else []):
            self.type_(p.children[1])
            sc = self.bind(p.children[0], sc, p, self.text(p), d)
        return sc

    def d_def_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, self.head(d, d.children[3]))
        sc = self.params(d, d.children[1])
        if d.children[2] is not None:
            self.type_(d.children[2])
        self.expr(d.children[3], sc)

    def d_proc_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, self.head(d, d.children[2]))
        sc = self.params(d, d.children[1])
        self.units.scopes[("proc", str(d.children[0]))] = sc
        self.stmts(d.children[2], sc)

    def d_state_decl(self, d, doc, ovr):
        for f in d.children:
            fdoc, name, typ = f.children[0], f.children[-2], f.children[-1]   # [doc] [internal]
            self.decl(name, ("state", str(name)), "state field", f,
                      f"{name}: {' '.join(self.text(typ).split())}", fdoc, container="state")
            self.type_(typ)

    def d_init_decl(self, d, doc, ovr):
        self.unit = "init"
        self.stmts(d.children[0], {})

    def d_action_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, self.head(d, d.children[4]))
        sc: dict = {}
        for b in (d.children[2].children if d.children[2] is not None else []):
            self.expr(b.children[1], sc)
            sc = self.bind(b.children[0], sc, b, " ".join(self.text(b).split()), d)
        self.units.scopes[("action", self.unit)] = sc
        if d.children[3] is not None:
            self.expr(d.children[3], sc)
        self.stmts(d.children[4], sc)

    def d_extend_decl(self, d, doc, ovr):
        name = str(d.children[0])
        self.unit = name
        key = next(((ns, name) for ns in ("action", "proc") if (ns, name) in self.names), None)
        if key is not None:
            self.occ(d.children[0], key)
        self.stmts(d.children[2], dict(self.units.scopes.get(key, {})) if key else {})

    def d_invariant_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, " ".join(self.text(d).split()).rstrip(";"))
        self.expr(d.children[1], {})

    d_transition_decl = d_invariant_decl

    def d_terminal_decl(self, d, doc, ovr):
        self.unit = d.data[:-5]
        self.expr(d.children[0], {})

    d_actor_decl = d_terminal_decl

    def d_rotate_decl(self, d, doc, ovr):
        self.named(d.children[0], "static")
        self.named(d.children[1], "def")
        for f in d.children[2:]:
            self.named(f, "state")

    def d_example_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, self.head(d, _brace(d)))
        if d.children[1] is not None:
            for ps in d.children[1].children:
                self.named(ps.children[0], "static")
                if ps.children[1].type == "NAME":
                    self.named(ps.children[1], "member")
        sc: dict = {}
        for c in d.children[2:]:
            if c.data == "from_clause":
                sc = self.stmts(c.children[0], sc, scope_node=d)
            elif c.data == "do_clause":
                for call in c.children:
                    self.move(call, sc)
            elif c.data == "expect_value":
                self.expr(c.children[0], sc)
            else:
                self.move(c.children[0], sc)
                if c.data == "expect_illegal" and c.children[1] is not None:
                    self.named(c.children[1], "rule")

    def move(self, call, sc: dict) -> None:
        """A move written `name(args)`: an action and its arguments."""
        self.named(call.children[0], "action")
        if call.children[1] is not None:
            self.expr(call.children[1], sc)

    def d_puzzle_decl(self, d, doc, ovr):
        self.global_decl(d, doc, ovr, f"puzzle {d.children[0]}")
        self.puzzle(str(d.children[0]), d, d.children[1:], {})

    def d_extend_puzzle_decl(self, d, doc, ovr):
        self.unit = str(d.children[0])
        self.named(d.children[0], "puzzle")
        self.puzzle(self.unit, d, d.children[1:],
                    dict(self.units.scopes.get(("puzzle", self.unit), {})))

    def puzzle(self, name: str, d, clauses, sc: dict) -> None:
        # The inputs and checks first, in order; the queries see every input.
        for c in clauses:
            if c.data == "input_clause":
                self.type_(c.children[1])
                if c.children[3] is not None:
                    self.expr(c.children[3], sc)
                sc = self.bind(c.children[0], sc, c,
                               f"input {c.children[0]}: {self.text(c.children[1])}", d)
                for chk in c.children[4:]:
                    self.check(chk, sc)
            elif c.data == "puzzle_check":
                self.check(c.children[0], sc)
        self.units.scopes[("puzzle", name)] = sc
        for c in clauses:
            if c.data == "query_clause":
                if c.children[0] is not None and str(c.children[0]) in sc:
                    self.occ(c.children[0], sc[str(c.children[0])])
                qsc = sc
                for q in c.children[1:]:
                    qsc = self.query_item(q, qsc, c)
            elif c.data in ("using_item", "from_clause"):
                self.query_item(c, sc, d)

    def check(self, chk, sc: dict) -> None:
        self.decl(chk.children[0], ("rule", str(chk.children[0])), "check", chk,
                  f"check {chk.children[0]} {self.text(chk.children[1])}",
                  container=self.unit)
        self.expr(chk.children[2], sc)

    def query_item(self, q, sc: dict, scope_node) -> dict:
        match q.data:
            case "choose_item":
                self.expr(q.children[1], sc)
                return self.bind(q.children[0], sc, q, " ".join(self.text(q).split()),
                                 scope_node)
            case "from_clause":
                return self.stmts(q.children[0], sc, scope_node=scope_node)
            case "using_item":
                for u in q.children:
                    self.move(u, sc)
            case "answer_item":
                pass
            case _:
                self.expr(q.children[0], sc)
        return sc

    # ---- statements ------------------------------------------------------------------

    def stmts(self, block, sc: dict, scope_node=None) -> dict:
        """The statements of ``block``; the scope after them (their `let`s)."""
        for s in block.children:
            sc = self.stmt(s, sc, scope_node if scope_node is not None else block)
        return sc

    def stmt(self, s, sc: dict, scope_node) -> dict:
        match s.data:
            case "requires_stmt":
                self.decl(s.children[0], ("rule", str(s.children[0])), "rule", s,
                          " ".join(self.head(s, s.children[2]).split()).rstrip(":"),
                          container=self.unit)
                self.expr(s.children[2], sc)
            case "let_stmt":
                self.expr(s.children[1], sc)
                return self.bind(s.children[0], sc, s, " ".join(self.text(s).split()),
                                 scope_node)
            case "assign_stmt":
                lv = s.children[0]
                self.named(lv.children[0], "state")
                for acc in lv.children[1:]:
                    if acc.data == "lv_field":
                        self.named(acc.children[0], "field")
                    else:
                        self.expr(acc.children[0], sc)
                self.expr(s.children[2], sc)
            case "if_stmt":
                self.expr(s.children[0], sc)
                self.stmts(s.children[1], sc)
                other = s.children[2]
                if other is not None:
                    if other.data == "if_stmt":
                        self.stmt(other, sc, scope_node)
                    else:
                        self.stmts(other, sc)
            case "do_stmt":
                self.named(s.children[0], "proc")
                if s.children[1] is not None:
                    self.expr(s.children[1], sc)
            case _:
                self.expr(s, sc)
        return sc

    # ---- types and expressions -------------------------------------------------------

    def type_(self, t) -> None:
        if isinstance(t, Token):
            return
        if t.data == "type_name":
            self.named(t.children[0], "static")
            return
        for c in t.children:
            if isinstance(c, Tree):
                if c.data.endswith("_type") or c.data == "type_name":
                    self.type_(c)
                else:
                    self.expr(c, {})

    def expr(self, t, sc: dict) -> None:
        if not isinstance(t, Tree):
            return
        ch = t.children
        match t.data:
            case "var":
                self.value(ch[0], sc)
            case "call_expr":
                name = str(ch[0])
                if name in BUILTINS:
                    self.occ(ch[0], ("builtin", name))
                else:
                    self.named(ch[0], "static", "def")
                self.expr(ch[1], sc)
            case "field_access":
                self.expr(ch[0], sc)
                self.named(ch[1], "state" if ch[0].data == "state_ref" else "field")
            case "with_":
                self.expr(ch[0], sc)
                for u in ch[1:]:
                    self.named(u.children[0], "field")
                    self.expr(u.children[1], sc)
            case "quant":
                b = ch[1]
                self.expr(b.children[1], sc)
                inner = self.bind(b.children[0], sc, b, " ".join(self.text(b).split()), t)
                self.expr(ch[2], inner)
                self.expr(ch[3], inner)
            case "largest":
                self.expr(ch[0], sc)
                for g in ch[1:]:
                    inner = sc
                    if g.children[0] is not None:
                        b = g.children[0]
                        self.expr(b.children[1], sc)
                        inner = self.bind(b.children[0], sc, b,
                                          " ".join(self.text(b).split()), g)
                    for c in g.children[1:]:
                        self.expr(c, inner)
            case "real_exists":
                b = ch[1]
                self.expr(b.children[1], sc)
                inner = self.bind(b.children[0], sc, b, " ".join(self.text(b).split()), t)
                self.expr(ch[2], inner)
                inner = self.bind(ch[0], inner, t, f"exists real {ch[0]}[...]", t)
                self.expr(ch[3], inner)
            case "reach_expr":
                inner = sc
                if ch[0] is not None:       # from { ... }: its lets are seen after it
                    inner = self.stmts(ch[0].children[0], sc, scope_node=t)
                for n in ch[1:-2]:
                    self.named(n, "action")
                self.expr(ch[-2], inner)
                self.expr(ch[-1], inner)
            case "let_expr" | "fix_expr":
                for c in ch[1:-1]:
                    self.expr(c, sc)
                what = "let" if t.data == "let_expr" else "fix"
                inner = self.bind(ch[0], sc, t, f"{what} {ch[0]} = {self.text(ch[1])}", t)
                self.expr(ch[-1], inner)
            case _:
                for c in ch:
                    self.expr(c, sc)


def _brace(d):
    """The first clause of an example (where its head ends), or the declaration itself."""
    for c in d.children[1:]:
        if isinstance(c, Tree) and c.data != "example_with":
            return c
    return d
