"""The language server's answers, computed without a client: the diagnostics of a document
(the checker's errors, as `rulebook check` reports them), and, from the index of its names
(`index`), hover, definitions, references, completion and rename.

A document is checked with the files it `extends` (read from the editor's buffers when they
are open, else from the disk: the document's directory, then spec/); references and rename
also reach the files that extend it.  Positions are 0-based lines and columns."""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from ..docs import english as E
from ..engine.evaluate import const_value
from ..lang import ir
from ..lang.check import Symbols, check_all
from ..lang.errors import RulebookError, Span, SpecError
from ..lang.resources import spec_dir
from ..lang.sources import SourceFile, display, find_spec, parse_source
from ..lang.types import EnumT
from . import lexical
from .index import Decl, FileIndex, Key, Range, Units, declared, index_file
from .reference import Examples, builtins, keywords, markdown

# The names a rename may change (record fields are found by name alone, rules may repeat).
RENAMABLE = {"def", "proc", "action", "state", "static", "member", "invariant", "example",
             "puzzle", "local"}
# Names read as values share one namespace: a new name must not hide another.
_VALUES = {"state", "static", "member"}


class Refused(Exception):
    """A request that cannot be answered as asked (a rename to a taken name)."""


@dataclass
class Diagnostic:
    range: Range
    message: str
    related: tuple = ()      # (file name, range, message) where the error really is


@dataclass
class Analysis:
    """One document, checked: its diagnostics, its chain of files (base first) and their
    indexes; the checked program and symbols when it checks.  The server keeps a `shipped`
    copy (no parse trees, program or symbols: those stay in the checking process)."""

    path: Path | None
    name: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[SourceFile] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)
    indexes: dict[str, FileIndex] = field(default_factory=dict)
    program: ir.Program | None = None
    symbols: Symbols | None = None
    # The state fields and parameters of an enum type: field -> enum (for completion).
    enums: dict[str, str] = field(default_factory=dict)

    @property
    def index(self) -> FileIndex | None:
        return self.indexes.get(self.name)

    def shipped(self) -> "Analysis":
        """What the server needs of this analysis, small enough to send between processes."""
        return Analysis(self.path, self.name, self.text, self.diagnostics, [], dict(self.paths),
                        self.indexes, enums=self.enums)


def span_range(sp: Span, text: str) -> Range:
    """A span as a range; a span with no end (a syntax error) covers the word it points at."""
    if sp.end_line:
        return (sp.line - 1, sp.col - 1, sp.end_line - 1, sp.end_col - 1)
    lines = text.split("\n")
    line, col = sp.line - 1, max(sp.col - 1, 0)
    ln = lines[line] if 0 <= line < len(lines) else ""
    m = re.compile(r"[A-Za-z_0-9]+|\S").match(ln, col)
    return (line, col, line, m.end() if m else col)


class Project:
    """Reads the files of a workspace (an open buffer first, else the disk) and keeps their
    parses, keyed by their text."""

    def __init__(self) -> None:
        self._parsed: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def parse(self, name: str, text: str) -> SourceFile:
        key = (name, hash(text))
        with self._lock:
            hit = self._parsed.get(key)
            if hit is not None and hit.text == text:
                self._parsed.move_to_end(key)
                return hit
        src = parse_source(text, name)
        with self._lock:
            self._parsed[key] = src
            while len(self._parsed) > 32:
                self._parsed.popitem(last=False)
        return src

    @staticmethod
    def read(path: Path, buffers: dict[Path, str]) -> str:
        if path in buffers:
            return buffers[path]
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise SpecError(f"cannot read {path}: {e}") from None

    @staticmethod
    def base_path(base: str, near: Path | None, buffers: dict[Path, str]) -> Path:
        """Where `extends "base"` is: beside the file that says it, else in spec/."""
        if near is not None:
            cand = near.parent / f"{base}.rules"
            if cand in buffers or cand.is_file():
                return cand
        return find_spec(base)

    def chain(self, path: Path | None, name: str, text: str,
              buffers: dict[Path, str]) -> tuple[list[SourceFile], dict[str, Path]]:
        """The files of a document, base first, and their paths by name."""
        src = self.parse(name, text)
        files, paths = [src], {name: path} if path is not None else {}
        seen = {src.game}
        near = path
        while files[0].base is not None:
            base = files[0].base
            if base in seen:
                raise SpecError(f"{files[0].path}: `extends` cycle through {base!r}")
            seen.add(base)
            bpath = self.base_path(base, near, buffers).resolve()
            bname = display(bpath)
            files.insert(0, self.parse(bname, self.read(bpath, buffers)))
            paths[bname] = bpath
            near = bpath
        return files, paths

    def analyse(self, path: Path | None, name: str, text: str,
                buffers: dict[Path, str]) -> Analysis:
        an = Analysis(path, name, text)
        try:
            an.files, an.paths = self.chain(path, name, text, buffers)
        except RulebookError as e:
            an.diagnostics.append(_diagnostic(e, an))
            return an
        try:
            errors, an.program, an.symbols = check_all(an.files, {}, {}, const_value)
        except Exception as e:  # a checker bug must not take the server down
            errors = [RulebookError(f"internal error of the checker: {type(e).__name__}: {e}")]
        an.diagnostics = sorted((_diagnostic(e, an) for e in errors), key=lambda d: d.range)
        names = declared(an.files)
        units = Units()
        for f in an.files:
            an.indexes[f.path] = index_file(f, names, units)
        if an.program is not None:
            types = {f.name: f.type for f in (*an.program.state, *an.program.params)}
            an.enums = {n: t.name for n, t in types.items() if isinstance(t, EnumT)}
        return an

    # ---- the files that extend a document ------------------------------------------------

    def extenders(self, paths: list[Path], buffers: dict[Path, str]) -> list[Path]:
        """The files (open or in the same directories, or in spec/) that extend any of
        ``paths``, directly or through another."""
        dirs = {p.parent for p in paths} | {spec_dir().resolve()}
        candidates = {p.resolve() for d in dirs for p in d.glob("*.rules")}
        candidates |= {p for p in buffers if p.suffix == ".rules"}
        found: list[Path] = []
        stems = {p.stem for p in paths}
        grew = True
        while grew:
            grew = False
            for c in sorted(candidates - set(found) - set(paths)):
                try:
                    base = lexical.header(self.read(c, buffers)).base
                except SpecError:
                    continue
                if base in stems:
                    found.append(c)
                    stems.add(c.stem)
                    grew = True
        return found

    def family(self, an: Analysis, buffers: dict[Path, str]) -> dict[str, FileIndex]:
        """The indexes of a document's chain and of every file that extends one of them."""
        out = dict(an.indexes)
        paths = dict(an.paths)
        chain = [an.paths[f.path] for f in an.files if f.path in an.paths]
        for ext in self.extenders(chain, buffers):
            name = display(ext)
            if name in out:
                continue
            try:
                files, fpaths = self.chain(ext, name, self.read(ext, buffers), buffers)
            except RulebookError:
                continue
            names = declared(files)
            units = Units()
            for f in files:
                idx = index_file(f, names, units)
                out.setdefault(f.path, idx)
            paths.update(fpaths)
        an.paths.update({k: v for k, v in paths.items() if k not in an.paths})
        return out


def _diagnostic(e: RulebookError, an: Analysis) -> Diagnostic:
    sp = e.span
    if sp is not None and sp.file == an.name and sp.line > 0:
        return Diagnostic(span_range(sp, an.text), e.message)
    # An error in a file this one extends (or with no place): shown on the `extends`.
    h = lexical.header(an.text)
    lines = lexical.Text(an.text)
    if h.base_range is not None:
        where = lines.position(h.base_range[0]) + lines.position(h.base_range[1])
    else:
        where = (0, 0, 0, len(an.text.split("\n", 1)[0]))
    related = ()
    if sp is not None and sp.line > 0:
        other = next((f.text for f in an.files if f.path == sp.file), e.source or "")
        related = ((sp.file, span_range(sp, other), e.message),)
    return Diagnostic(where, e.headline(), related)


# ---- looking names up ----------------------------------------------------------------------

def uri_of(an: Analysis, name: str) -> str:
    """The URI of the file ``name`` of a document's chain (or family)."""
    if name == an.name and an.path is None:
        return name
    path = an.paths.get(name)
    return (path if path is not None else Path(name).resolve()).as_uri()


def occurrence(an: Analysis, line: int, col: int):
    idx = an.index
    return idx.at(line, col) if idx is not None else None


def declarations(indexes, key: Key) -> list[Decl]:
    return [d for idx in indexes.values() for d in idx.decls if d.key == key]


def definition(an: Analysis, line: int, col: int) -> list[tuple[str, Range]]:
    """Where the name at a position is declared: the declaration in force (an `override`
    rather than the base's), every one for a rule named in several actions."""
    occ = occurrence(an, line, col)
    if occ is None:
        return []
    decls = declarations(an.indexes, occ.key)
    if occ.key[0] not in ("rule", "state"):
        decls = decls[-1:]
    return [(d.file, d.name_range) for d in decls]


def references(an: Analysis, family: dict[str, FileIndex], line: int, col: int,
               include_declaration: bool = True) -> list[tuple[str, Range]]:
    """Every place the name at a position is written, in the document's chain and the files
    that extend it."""
    occ = occurrence(an, line, col)
    if occ is None:
        return []
    where = {an.name: an.index} if occ.key[0] == "local" else family
    return [(name, o.range) for name, idx in where.items() for o in idx.occurrences
            if o.key == occ.key and (include_declaration or not o.is_decl)]


def rename(an: Analysis, family: dict[str, FileIndex], line: int, col: int,
           new: str) -> dict[str, list[Range]]:
    """The ranges to rewrite, by file, to rename the name at a position to ``new``."""
    occ = occurrence(an, line, col)
    if occ is None:
        raise Refused("no name to rename here")
    ns, old = occ.key
    if ns not in RENAMABLE:
        raise Refused(f"a {'builtin' if ns == 'builtin' else _NS_WORDS.get(ns, ns)} "
                      f"cannot be renamed")
    if not lexical.identifier(new) or new in keywords() or new in builtins():
        raise Refused(f"{new!r} is not a name the language allows (a keyword, a builtin or "
                      f"not an identifier)")
    clash = {ns} | (_VALUES if ns in _VALUES else set())
    for d in (d for idx in family.values() for d in idx.globals()):
        if d.key[0] in clash and d.name == new:
            raise Refused(f"{new!r} is already declared at {d.file}:{d.name_range[0] + 1}:"
                          f"{d.name_range[1] + 1}")
    out: dict[str, list[Range]] = {}
    for name, r in references(an, family, line, col):
        out.setdefault(name, []).append(r)
    return out


_NS_WORDS = {"field": "record field", "rule": "rule name"}


# ---- hover ---------------------------------------------------------------------------------

def hovered(an: Analysis | None, line: int, col: int) -> Decl | None:
    """The declaration of the name at a position (``an`` may be of an older text than the
    document's, or None before the first check)."""
    occ = occurrence(an, line, col) if an is not None else None
    if occ is None or occ.key[0] == "builtin":
        return None
    decls = declarations(an.indexes, occ.key)
    if not decls:
        return None
    if occ.key[0] != "rule":
        return decls[-1]
    return next((d for d in decls if d.range[0] <= line <= d.range[2] and d.file == an.name),
                decls[-1])


def keyword_hover(text: lexical.Text, line: int, col: int, examples: Examples) -> str | None:
    """What the keyword or builtin at a position means."""
    w = lexical.word_at(text, line, col)
    entry = examples.entry(w[0]) if w else None
    return markdown(entry) if entry is not None else None


def describe(d: Decl, sentences: list[str]) -> str:
    """The hover of a declaration: its signature, doc, rulebook reference and ``sentences``
    (its English, from `english`)."""
    where = f"{d.kind}" + (f" of `{d.container}`" if d.container and d.kind != "local" else "")
    where += f", {d.file}:{d.name_range[0] + 1}"
    out = [f"```rules\n{d.signature}\n```", f"*{where}*"]
    if d.doc:
        out.append(d.doc)
    if d.ref:
        out.append(f"Rulebook: « {d.ref} »")
    out += [f"In English: {s}" for s in sentences]
    return "\n\n".join(out)


class _Checked:
    """What `english.checked_def` reads of a game: its symbols."""

    def __init__(self, symbols: Symbols):
        self.symbols = symbols


def english(an: Analysis, d: Decl) -> list[str]:
    """The sentences the docs write for a declaration (when the program checks)."""
    p = an.program
    if p is None or an.symbols is None:
        return []
    en = E.for_program(p, {f.path: f.text for f in an.files})
    try:
        if d.kind == "def":
            call = E.checked_def(_Checked(an.symbols), d.name)
            return [E.def_sentence(en, call), f"Its type: `{call.type}`"] if call else []
        if d.kind in ("action", "chance", "rule"):
            name = d.name if d.kind != "rule" else d.container
            a = next((a for a in p.actions if a.name == name), None)
            return [E.rule_sentence(en, a, s) for s in (a.body if a else ())
                    if isinstance(s, ir.Requires) and (d.kind != "rule" or s.name == d.name)]
        if d.kind in ("invariant", "transition"):
            return [E.invariant_sentence(en, i) for i in p.invariants if i.name == d.name]
    except (RulebookError, AttributeError, IndexError, KeyError, TypeError):
        return []
    return []


# ---- completion ----------------------------------------------------------------------------

@dataclass
class Completion:
    label: str
    kind: str          # a declaration's kind, "keyword" or "builtin"
    detail: str = ""
    doc: str = ""


def completion(an: Analysis | None, text: lexical.Text, line: int,
               col: int) -> list[Completion]:
    """What may be written at a position: after `state.` a state field, after `.` a record
    field, after `do` a proc or an action, after `r ==` or `with r =` the options of the
    reading r (or the values of an enum field); elsewhere the names in scope, the keywords
    and the builtins."""
    prefix = lexical.line_prefix(text, line, col)
    decls = [d for idx in (an.indexes.values() if an else ()) for d in idx.globals()]
    by_kind = lambda *kinds: _items(d for d in decls if d.kind in kinds)  # noqa: E731
    m = re.search(r"(\bstate\s*)?\.\s*\w*$", prefix)
    if m and not re.search(r"\.\.\s*\w*$", prefix):
        return by_kind("state field") if m.group(1) else by_kind("record field")
    if re.search(r"\bdo\s+\w*$", prefix):
        return by_kind("proc", "action", "chance")
    if re.search(r"\b(legal|illegal|using)\s+\w*$|\busing\b[^;]*,\s*\w*$", prefix):
        return by_kind("action", "chance")
    m = re.search(r"(\w+)\s*(==|!=|=)\s*\w*$", prefix)
    if m and an is not None:
        opts = _values_of(an, decls, m.group(1))
        if opts:
            return opts
    out = _items(d for d in _locals_at(an, line, col))
    out += by_kind("state field", "param", "const", "type", "enum", "record", "reading",
                   "enum value", "reading option", "def")
    out += [Completion(k, "keyword") for k in keywords()]
    out += [Completion(b, "builtin", f"{b}(...)") for b in builtins()]
    return out


def _items(decls) -> list[Completion]:
    seen: dict[str, Completion] = {}
    for d in decls:
        seen.setdefault(d.name, Completion(d.name, d.kind, d.signature, d.doc))
    return list(seen.values())


def _values_of(an: Analysis, decls: list[Decl], word: str) -> list[Completion]:
    """The options of the reading ``word``, or the values of the enum type of the state field
    or parameter ``word``."""
    opts = [d for d in decls if d.kind == "reading option" and d.container == word]
    if opts:
        return _items(opts)
    enum = an.enums.get(word)
    if enum is not None:
        return _items(d for d in decls if d.kind == "enum value" and d.container == enum)
    return []


def _locals_at(an: Analysis | None, line: int, col: int) -> list[Decl]:
    idx = an.index if an is not None else None
    if idx is None:
        return []
    return [d for d in idx.decls if d.scope is not None
            and (d.scope[0], d.scope[1]) <= (line, col) <= (d.scope[2], d.scope[3])]
