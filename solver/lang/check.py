"""Check: resolve names, infer types and bounds, and lower a parsed spec (plus the files it
extends) to the typed IR of `ir.py`, under chosen parameter values and readings.

The `Checker` is one mixin per concern: declarations (check_decls), expressions (check_expr,
with builtins and check_real), statements (check_stmts) and the program's units
(check_program).  It does not outlive checking: the later stages read the `Symbols` it leaves,
and check one more expression against a program through `check_expression` and
`Symbols.call`."""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from lark import Token

from . import ir
from .check_decls import DeclChecks, Item
from .check_expr import ExprChecks
from .check_program import ProgramChecks
from .check_real import RealChecks
from .check_stmts import StmtChecks
from .errors import RulebookError, Span, SpecError
from .irwalk import nodes
from .scope import Frame, Scope
from .sources import SourceFile, gc_paused
from .syntax import parse_expr
from .types import RecordT, Type, assignable

# Evaluates a constant expression (a parameter's default, a `const`, a bound): the engine
# supplies it, so that the checker needs no evaluator of its own.
ConstValue = Callable[[ir.Expr], object]


class Checker(DeclChecks, ExprChecks, RealChecks, StmtChecks, ProgramChecks):
    """Checks the program of ``files`` under parameter values ``params`` and reading choices
    ``readings``; `program()` gives its IR, then `symbols()` what later stages read."""

    @gc_paused()
    def __init__(self, files: list[SourceFile], params: dict, readings: dict[str, str],
                 const_value: ConstValue):
        self._setup(files, params, readings, const_value)
        self._collect()

    def _setup(self, files, params, readings, const_value) -> None:
        self.files = list(files)
        self.param_overrides = dict(params)
        self.reading_choices = dict(readings)
        self.const_value = const_value
        self.items: dict[tuple[str, str], Item] = {}
        self.order: list[tuple[str, str]] = []
        self.static: dict[str, object] = {}     # name -> resolved param/const value or Type
        # A def's body is checked again at every call, so the same parse nodes come back: their
        # spans and written types (which read only parameters and constants) are made once.
        self._spans: dict = {}                  # (id(node), file) -> (node, Span)
        self._types: dict = {}                  # id(type node) -> (node, Type)
        self._bodies: dict = {}                 # a def checked once: see ExprChecks.inline
        self.static_kind: dict[str, str] = {}
        self.resolving: set[str] = set()
        self.enum_members: dict[str, tuple] = {}
        self.readings: dict[str, ir.ReadingDecl] = {}
        self.params: list[ir.Param] = []
        self.param_values: dict[str, object] = {}
        self.state_fields: list[ir.StateFieldDecl] = []
        self.state_type: RecordT | None = None
        self.inlining: list[str] = []
        self.nesting = 0                        # expressions and ifs being checked, nested
        self.reached = 0                        # the most `nesting` reached (see inline)

    @classmethod
    def resume(cls, symbols: "Symbols") -> "Checker":
        """A checker that goes on from a checked program's symbols (to check one more
        expression against it): its declarations collected and its statics resolved."""
        ck = cls.__new__(cls)
        ck._setup(symbols.files, symbols.params, symbols.reading_choices, symbols.const_value)
        ck.items = dict(symbols.items)
        ck.order = list(symbols.order)
        ck.static = dict(symbols.statics)
        ck.static_kind = dict(symbols.static_kinds)
        ck.enum_members = dict(symbols.enum_members)
        ck.readings = dict(symbols.readings)
        ck.state_type = symbols.state_type
        ck._bodies = dict(symbols.bodies)
        ck.goto(symbols.cursor)
        return ck

    def symbols(self) -> "Symbols":
        """What the later stages read of this checker (after `program()`)."""
        return Symbols(
            files=tuple(self.files), items=MappingProxyType(dict(self.items)),
            order=tuple(self.order), reading_choices=MappingProxyType(dict(self.reading_choices)),
            params=MappingProxyType(dict(self.param_overrides)),
            statics=MappingProxyType(dict(self.static)),
            static_kinds=MappingProxyType(dict(self.static_kind)),
            enum_members=MappingProxyType(dict(self.enum_members)),
            readings=MappingProxyType(dict(self.readings)), state_type=self.state_type,
            const_value=self.const_value, cursor=self.cursor(),
            bodies=MappingProxyType(dict(self._bodies)))

    # ---- where we are: the file being checked, spans and errors ------------------------

    def cursor(self) -> tuple[str, str]:
        """The file (path, text) whose declarations are being checked."""
        return getattr(self, "_file", self.files[-1].path), getattr(self, "_text",
                                                                      self.files[-1].text)

    def goto(self, cursor: tuple[str, str]) -> None:
        self._file, self._text = cursor

    def enter(self, it: Item) -> None:
        self._file, self._text = it.file, it.text

    def span(self, node, file: str | None = None) -> Span:
        file = file or self.cursor()[0]
        hit = self._spans.get((id(node), file))
        if hit is not None and hit[0] is node:
            return hit[1]
        span = self.make_span(node, file)
        self._spans[(id(node), file)] = (node, span)
        return span

    @staticmethod
    def make_span(node, file: str) -> Span:
        if isinstance(node, Token):
            return Span(file, node.line or 0, node.column or 0, node.end_line or 0,
                        node.end_column or 0)
        meta = getattr(node, "meta", None)
        if meta is None or getattr(meta, "empty", True):
            return Span(file, 0, 0)
        return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)

    def err(self, node, msg: str, file: str | None = None, text: str | None = None) -> SpecError:
        f, t = self.cursor()
        return SpecError(msg, self.span(node, file or f), text or t)

    # ---- a def applied to checked arguments --------------------------------------------

    def def_call(self, name: str, args: tuple) -> ir.Call:
        """The def ``name`` called on the checked ``args``; the call's parameters and body
        take the frame slots after every slot the arguments use."""
        it = self.items.get(("def", name))
        if it is None:
            raise SpecError(f"unknown def {name!r}")
        ptypes = self.def_params(name)
        if len(ptypes) != len(args):
            raise SpecError(f"{name} takes {len(ptypes)} argument(s), given {len(args)}")
        for a, (_, pt) in zip(args, ptypes):
            if not assignable(a.type, pt):
                raise SpecError(f"expected {pt}, found {a.type}", a.span)
        frame = Frame(1 + max((n.slot for a in args for n in nodes(a)
                               if isinstance(getattr(n, "slot", None), int)), default=-1))
        sc = Scope({}, frame)
        slots = tuple(frame.new() for _ in args)
        return self.inline(it, ptypes, tuple(args), slots, sc, self.span(it.tree, it.file))


@dataclass(frozen=True, eq=False)
class Symbols:
    """What checking a program leaves for the later stages, read-only: its source files, its
    declarations by (kind, name) in source order, the readings chosen; and what checking one
    more expression against it needs (`check_expression`, `call`): the parameter values asked
    for, the resolved statics, the state's type, the constant evaluator, the def bodies
    already checked, and the file such an expression is reported in (where checking ended)."""

    files: tuple[SourceFile, ...]
    items: Mapping[tuple[str, str], Item]
    order: tuple[tuple[str, str], ...]
    reading_choices: Mapping[str, str]
    params: Mapping[str, object]
    statics: Mapping[str, object]
    static_kinds: Mapping[str, str]
    enum_members: Mapping[str, tuple]
    readings: Mapping[str, ir.ReadingDecl]
    state_type: RecordT | None
    const_value: ConstValue
    cursor: tuple[str, str]
    bodies: Mapping

    def def_params(self, name: str) -> list[tuple[str, Type]]:
        """The parameters of the def ``name``: (name, type) each."""
        return Checker.resume(self).def_params(name)

    def call(self, name: str, args: Sequence[ir.Expr]) -> ir.Call:
        """The checked call of the def ``name`` on ``args`` (e.g. `ir.Local`s of its parameter
        types): its body inlined as the checker inlines a call written in a spec, with the
        def's span."""
        return Checker.resume(self).def_call(name, tuple(args))


@gc_paused()
def check_program(files: list[SourceFile], params: dict, readings: dict[str, str],
                  const_value: ConstValue) -> tuple[ir.Program, Symbols]:
    """Check the program of ``files``: its IR and its symbols."""
    checker = Checker(files, params, readings, const_value)
    return checker.program(), checker.symbols()


def state_type(files: list[SourceFile], params: dict, readings: dict[str, str],
               const_value: ConstValue) -> Type:
    """The state type of the program of ``files`` under ``params``, without checking its
    actions, defs and the rest (`Checker.state_only`): far cheaper than `check_program`."""
    return Checker(files, params, readings, const_value).state_only()


@gc_paused()
def check_all(files: list[SourceFile], params: dict, readings: dict[str, str],
              const_value: ConstValue
              ) -> tuple[list[RulebookError], ir.Program | None, Symbols | None]:
    """`check_program` for a tool that shows every error (an editor): the errors, the program
    when there is none, and the symbols when the declarations could be gathered.  A program
    that does not check is checked again unit by unit, going on after each error."""
    try:
        checker = Checker(files, params, readings, const_value)
    except RulebookError as e:
        return [e], None, None
    try:
        return [], checker.program(), checker.symbols()
    except RulebookError as e:
        first = e
    checker = Checker(files, params, readings, const_value)
    errors = checker.program_errors() or [first]
    return errors, None, checker.symbols()


def check_expression(symbols: Symbols, text: str, bindings: dict[str, Type] | None = None
                     ) -> tuple[ir.Expr, tuple[int, ...], int]:
    """Check the expression ``text`` (typed by a tool, e.g. ``score(p)``) against a checked
    program, with locals ``bindings`` (name -> type): its IR, the slots of the locals in
    order, and the size of the frame it uses."""
    frame = Frame()
    sc = Scope({}, frame)
    slots = []
    for n, t in (bindings or {}).items():
        slot = frame.new()
        slots.append(slot)
        sc = sc.bind(n, ir.Local(t, None, n, slot))
    tree = parse_expr(text)
    e = Checker.resume(symbols).expr(tree, sc)
    return e, tuple(slots), frame.size
