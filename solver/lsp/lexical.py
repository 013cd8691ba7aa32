"""What can be read of a `.rules` text without parsing it: its tokens, its header, the word
under the cursor and the outline of its declarations.  Fast (a regular expression over the
text: a 1 MB file in a fraction of a second) and tolerant (a file with a syntax error still
has an outline), where the parser and the checker take seconds on a large file."""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

_TOKEN = re.compile(r'(?P<ws>\s+)|(?P<comment>#[^\n]*)'
                    r'|(?P<string>"""(?:.|\n)*?"""|"(?:[^"\\\n]|\\.)*")'
                    r'|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<int>[0-9]+)|(?P<other>.)', re.S)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Declarations ending at their closing brace (the others end at a `;`).
_BRACED = {"enum", "record", "state", "init", "reading", "action", "chance", "extend", "proc",
           "example", "puzzle"}
_DECL_WORDS = _BRACED | {"param", "type", "const", "def", "invariant", "transition",
                         "terminal", "actor", "rotate"}
_UNNAMED = {"state", "init", "terminal", "actor", "rotate"}


@dataclass
class Token:
    kind: str      # name, string, int, other
    text: str
    start: int     # offsets in the text
    end: int


def tokens(text: str) -> list[Token]:
    """The tokens of ``text``, without whitespace and comments; an unclosed string is one
    `other` token (its quote), so a file being typed still tokenizes."""
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind not in ("ws", "comment"):
            out.append(Token(kind, m.group(), m.start(), m.end()))
    return out


# A character outside the Basic Multilingual Plane: two UTF-16 code units.
_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


class Text:
    """A text and its lines: offsets <-> 0-based (line, column), columns in code points (as
    Python counts) or in the units of a position encoding of the protocol ("utf-16", its
    default, "utf-8" or "utf-32").  What is found of the text (where its lines start, whether
    its columns need converting) is found once: a server keeps one `Text` per version of a
    document."""

    def __init__(self, text: str):
        self.text = text
        self._starts: list[int] | None = None
        self._plain: dict[str, bool] = {}

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        return self._starts

    def position(self, offset: int) -> tuple[int, int]:
        starts = self.starts
        line = bisect_right(starts, offset) - 1
        return line, offset - starts[line]

    def offset(self, line: int, col: int) -> int:
        starts = self.starts
        if line >= len(starts):
            return len(self.text)
        return starts[line] + col

    def line(self, i: int) -> str:
        """Line ``i`` without its end ("" past the end of the text)."""
        starts = self.starts
        if not 0 <= i < len(starts):
            return ""
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(self.text)
        return self.text[starts[i]:end]

    # ---- columns in a position encoding ------------------------------------------------

    def plain(self, encoding: str) -> bool:
        """Whether a column in ``encoding`` units is the column in code points everywhere in
        the text (an ASCII text; for UTF-16, a text without characters outside the BMP)."""
        hit = self._plain.get(encoding)
        if hit is None:
            hit = self._plain[encoding] = (
                encoding == "utf-32" or self.text.isascii()
                or (encoding == "utf-16" and _ASTRAL.search(self.text) is None))
        return hit

    def to_units(self, line: int, col: int, encoding: str) -> int:
        """Column ``col`` (code points) of ``line`` in ``encoding`` units."""
        if self.plain(encoding):
            return col
        ln = self.line(line)
        head = ln[:col]
        units = len(head.encode("utf-16-le")) // 2 if encoding == "utf-16" \
            else len(head.encode("utf-8"))
        return units + max(0, col - len(ln))

    def from_units(self, line: int, units: int, encoding: str) -> int:
        """Column ``units`` (in ``encoding`` units) of ``line`` in code points; a column
        inside a character is that character's."""
        if self.plain(encoding):
            return units
        ln = self.line(line)
        n = 0
        for i, ch in enumerate(ln):
            if n >= units:
                return i
            n += _width(ch, encoding)
        return len(ln) + max(0, units - n)

    def range_to_units(self, r: tuple[int, int, int, int], encoding: str):
        """A range (lines and code-point columns) in ``encoding`` units."""
        if self.plain(encoding):
            return r
        return (r[0], self.to_units(r[0], r[1], encoding),
                r[2], self.to_units(r[2], r[3], encoding))


def _width(ch: str, encoding: str) -> int:
    if encoding == "utf-16":
        return 2 if ord(ch) > 0xFFFF else 1
    return len(ch.encode("utf-8"))


@dataclass
class Header:
    game: str | None
    base: str | None
    base_range: tuple[int, int] | None   # offsets of the base's string


def header(text: str) -> Header:
    """``game "id" ["Title"] ["extends" "base"];`` read from the start of ``text``."""
    toks = []
    for t in tokens(text[:4096]):
        if t.text == ";":
            break
        toks.append(t)
    game = _unquote(toks[1].text) if len(toks) > 1 and toks[0].text == "game" \
        and toks[1].kind == "string" else None
    for i, t in enumerate(toks[:-1]):
        if t.text == "extends" and toks[i + 1].kind == "string":
            return Header(game, _unquote(toks[i + 1].text), (toks[i + 1].start, toks[i + 1].end))
    return Header(game, None, None)


def _unquote(s: str) -> str:
    return s[3:-3] if s.startswith('"""') else s[1:-1]


def word_at(text: Text, line: int, col: int) -> tuple[str, int, int] | None:
    """The identifier at a 0-based position (the cursor inside it or just after it), with the
    columns where it starts and ends; None in a comment or a string of that line."""
    ln = text.line(line)
    for m in _TOKEN.finditer(ln):
        if m.start() <= col <= m.end() and m.lastgroup == "name":
            return m.group(), m.start(), m.end()
        if m.start() <= col < m.end() and m.lastgroup in ("comment", "string"):
            return None
    return None


def line_prefix(text: Text, line: int, col: int) -> str:
    return text.line(line)[:col]


@dataclass
class Symbol:
    name: str
    kind: str                       # the declaring keyword, or "field", "value", "option", "rule"
    start: int
    end: int
    name_start: int
    name_end: int
    children: list["Symbol"] = field(default_factory=list)


_GAP = r'(?:\s|#[^\n]*)*'
_STR = r'(?:"""(?:.|\n)*?"""|"(?:[^"\\\n]|\\.)*")'
# Where an item starts: [doc STRING [@ STRING]] [override] KEYWORD [NAME [NAME]].
_HEAD = re.compile(_GAP + r'(?:doc' + _GAP + _STR + _GAP + r'(?:@' + _GAP + _STR + _GAP
                   + r')?)?(?:override\b' + _GAP + r')?(?P<kw>[A-Za-z_]\w*)'
                   + r'(?:' + _GAP + r'(?P<name>[A-Za-z_]\w*))?'
                   + r'(?:' + _GAP + r'(?P<name2>[A-Za-z_]\w*))?', re.S)
# What delimits items: braces and semicolons, outside comments and strings.  The grammar puts
# a `;` in braces or at the end of an item, never in parentheses or brackets, so those need no
# counting (a file of defs has five times fewer braces and semicolons than brackets).
_STOP = re.compile(r'[#"{};]')
_STRING1 = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def _delimiters(text: str):
    """The offsets and characters of the braces and semicolons of ``text`` outside its
    comments and strings (a search for one of five characters, which `re` does fast)."""
    pos, n = 0, len(text)
    search = _STOP.search
    while True:
        m = search(text, pos)
        if m is None:
            return
        i = m.start()
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            pos = n if j < 0 else j
        elif c == '"':
            if text.startswith('"""', i):
                j = text.find('"""', i + 3)
                pos = n if j < 0 else j + 3
            else:
                s = _STRING1.match(text, i)
                pos = s.end() if s is not None else i + 1
        else:
            pos = i + 1
            yield i, c


def outline(text: str) -> list[Symbol]:
    """The top-level declarations of ``text`` with what they contain (state fields, enum
    values, record fields, reading options, the rules of an action).  Only braces and
    semicolons are scanned, and each item's head read where it starts."""
    out: list[Symbol] = []
    start, depth = 0, 0
    head = _HEAD.match(text, 0)
    braced = head is not None and head.group("kw") in _BRACED
    for i, t in _delimiters(text):
        if t == "{":
            depth += 1
            continue
        if t == "}":
            depth -= 1
            if not (depth <= 0 and braced):
                continue
        elif depth > 0:
            continue
        sym = _symbol(text, head, start, i + 1)
        if sym is not None:
            out.append(sym)
        start, depth = i + 1, 0
        head = _HEAD.match(text, start)
        braced = head is not None and head.group("kw") in _BRACED
    return out


def _symbol(text: str, head, start: int, end: int) -> Symbol | None:
    if head is None or head.group("kw") not in _DECL_WORDS:
        return None
    k = head.group("kw")
    span = "kw"
    if k not in _UNNAMED:
        span = "name"
        if head.group("name") is None:
            return None
        if k == "extend" and head.group("name") == "puzzle" and head.group("name2"):
            span = "name2"
    name = head.group(span) if k != "extend" else \
        f"extend {'puzzle ' if span == 'name2' else ''}{head.group(span)}"
    sym = Symbol(name, k, head.start("kw"), end, head.start(span), head.end(span))
    if k not in ("state", "enum", "record", "reading", "action", "chance", "proc", "extend"):
        return sym
    body = tokens(text[start:end])
    for t in body:
        t.start += start
        t.end += start
    if k == "state":
        sym.children = _members(body, "field", after=("{", ";"), then=":")
    elif k == "enum":
        sym.children = _members(body, "value", after=("{", ","), then=None)
    elif k == "record":
        sym.children = _members(body, "field", after=("{", ","), then=":")
    elif k == "reading":
        sym.children = _members(body, "option", after=("{", ";"), then="string")
    else:
        sym.children = [Symbol(b.text, "rule", a.start, b.end, b.start, b.end)
                        for a, b in zip(body, body[1:])
                        if a.text == "requires" and b.kind == "name"]
    return sym


def _members(body: list[Token], kind: str, after: tuple, then) -> list[Symbol]:
    """Names at depth 1 of a braced declaration, each following one of ``after`` (past a
    field's doc) and followed by ``then`` (a text, "string", or None for anything)."""
    out = []
    depth = 0
    prev = None
    for i, t in enumerate(body):
        if t.kind == "other" and t.text in "{([":
            depth += 1
        elif t.kind == "other" and t.text in "})]":
            depth -= 1
        if depth == 1 and t.kind == "name" and t.text not in ("doc", "internal"):
            nxt = body[i + 1] if i + 1 < len(body) else None
            ok_next = then is None or (nxt is not None and (
                nxt.kind == "string" if then == "string" else nxt.text == then))
            if prev is not None and prev.text in after and ok_next:
                out.append(Symbol(t.text, kind, t.start, t.end, t.start, t.end))
        if depth == 1 and not (t.kind == "string" or t.text in ("doc", "@", "internal")):
            prev = t                  # a field's doc and `internal` marker come before it
    return out


def identifier(s: str) -> bool:
    return _IDENT.fullmatch(s) is not None
