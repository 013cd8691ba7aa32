"""Syntax: the Lark grammar, the parser, and friendly syntax errors."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from lark import Lark, Tree, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .errors import Span, SpecError
from .resources import grammar_path

# Names of terminals as a rules author would say them.
_TOKEN_WORDS = {
    "SEMICOLON": "';'", "COLON": "':'", "COMMA": "','", "LPAR": "'('", "RPAR": "')'",
    "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'", "RBRACE": "'}'", "EQUAL": "'='",
    "NAME": "a name", "INT": "a number", "STRING": "a string", "DOT": "'.'", "$END": "end of file",
    "ADD_OP": "'+' or '-'", "MUL_OP": "'*' or '/' or '%'", "CMP_OP": "a comparison",
    "MINUS": "'-'",
}

# Typical mistakes, recognised with Lark's match_examples.
_EXAMPLES = {
    "missing ';' at the end of a declaration": [
        'game "g"; const a = 1 const b = 2;',
        'game "g"; def f() = 1 def g() = 2;',
        'game "g"; action a() { requires r: true }',
    ],
    "a quantifier takes one binder; nest them (forall a in A: forall b in B: ...)": [
        'game "g"; def f() = forall a in A, b in B: true;',
    ],
    "a `requires` needs a rule name: requires NAME \"message\": condition;": [
        'game "g"; action a() { requires true; }',
        'game "g"; action a() { requires 1 < 2; }',
    ],
}


@lru_cache(maxsize=1)
def parser() -> Lark:
    # Lark caches the LALR tables in the temp directory, keyed by the grammar's hash: building
    # them is most of a cold start.
    opts = dict(parser="lalr", strict=True, start=["start", "expr"], propagate_positions=True,
                maybe_placeholders=True)
    text = grammar_path().read_text(encoding="utf-8")
    try:
        return Lark(text, cache=True, **opts)
    except OSError:  # an unwritable temp directory: build the tables every time
        return Lark(text, **opts)


def parse(text: str, filename: str) -> Tree:
    """Parse one rules file; raise `SpecError` with file:line:col on any syntax error."""
    try:
        return _parsed(text)
    except UnexpectedInput as e:
        raise _friendly(e, text, filename) from None


@lru_cache(maxsize=16)
def _parsed(text: str) -> Tree:
    """The tree of a rules file, parsed once per text: a search that compiles one spec under
    many parameters and readings (`rulebook ambiguities`) parses it once.  Nothing changes a
    parsed tree (the checker and the tools only read it), so the tree is shared."""
    return parser().parse(text, start="start")


def parse_expr(text: str, filename: str = "<expression>") -> Tree:
    """Parse one expression (used by the CLI's --expect and by the tools)."""
    try:
        return parser().parse(text, start="expr")
    except UnexpectedInput as e:
        raise _friendly(e, text, filename) from None


def parse_file(path: Path) -> Tree:
    return parse(path.read_text(encoding="utf-8"), str(path))


def _friendly(e: UnexpectedInput, text: str, filename: str) -> SpecError:
    line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
    hint = None
    try:
        hint = e.match_examples(lambda t: parser().parse(t, start="start"), _EXAMPLES,
                                use_accepts=True)
    except Exception:  # match_examples re-parses; a failure there must not hide the real error
        hint = None
    if isinstance(e, UnexpectedCharacters):
        msg = f"unexpected character {text[e.pos_in_stream]!r}"
    elif isinstance(e, UnexpectedEOF):
        line, col = _end_position(text)
        msg = f"unexpected end of file; expected {_expected(e.expected)}"
    elif isinstance(e, UnexpectedToken):
        found = "end of file" if e.token.type == "$END" else repr(str(e.token))
        if e.token.type == "$END":
            line, col = _end_position(text)
        msg = f"unexpected {found}; expected {_expected(e.expected)}"
    else:  # pragma: no cover - Lark has no other subclasses today
        msg = str(e).splitlines()[0]
    hint = hint or _hint(e, text)
    if hint:
        msg = f"{hint} ({msg})"
    return SpecError(msg, Span(filename, line, col), text)


_QUANT = re.compile(r"\b(forall|exists|sum|count|max|min|table)\s+[A-Za-z_]\w*\s+in\b[^:;]*$")


def _hint(e: UnexpectedInput, text: str) -> str | None:
    """Recognise the usual mistakes from the text before the error (whatever the parser's
    stack holds, unlike match_examples, which needs the same depth)."""
    if not isinstance(e, UnexpectedToken) or e.token.type == "$END":
        return None
    before = text[:e.token.start_pos]
    stripped = before.rstrip()
    expected = set(e.expected)
    if (stripped.endswith("requires") and "NAME" in expected) or \
            (re.search(r"\brequires\s+[A-Za-z_]\w*$", stripped) and "COLON" in expected):
        return "a `requires` needs a rule name: requires NAME \"message\": condition;"
    if str(e.token) == "," and _QUANT.search(before.split(";")[-1]):
        return "a quantifier takes one binder; nest them (forall a in A: forall b in B: ...)"
    if "SEMICOLON" in expected and "\n" in before[len(stripped):]:
        return "missing ';' at the end of a declaration"
    return None


def _expected(names) -> str:
    words = sorted({_TOKEN_WORDS.get(n, _keyword(n)) for n in names})
    if len(words) > 6:
        words = words[:6] + ["…"]
    return " or ".join(words) if words else "something else"


def _keyword(name: str) -> str:
    # Anonymous keyword terminals are named after their text, e.g. 'REQUIRES' -> 'requires'.
    return f"'{name.lower()}'" if name.isupper() else name


def _end_position(text: str) -> tuple[int, int]:
    lines = text.splitlines() or [""]
    return len(lines), len(lines[-1]) + 1
