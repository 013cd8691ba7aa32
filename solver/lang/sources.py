"""Find and read spec files and follow their `extends` chain: the text the checker starts from,
kept apart so that the tools that only read headers (docs, CLI) need no checker."""
from __future__ import annotations

import ast
import contextlib
import errno
import gc
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from lark import Token, Tree

from .errors import RulebookError, Span, SpecError, VariantError
from .resources import spec_dir
from .syntax import parse


@dataclass
class SourceFile:
    path: str
    text: str
    tree: Tree
    game: str
    title: str
    base: str | None


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


# The header of a spec file, read without parsing the rest: `game "id" ["title"] [extends
# "base"];` after any comments and blank lines.
_STRING = r'"(?:[^"\\\n]|\\.)*"|"""[\s\S]*?"""'
_HEADER = re.compile(rf'(?:\s|#[^\n]*)*game\s+({_STRING})(?:\s+(?:{_STRING}))?'
                     rf'(?:\s+extends\s+({_STRING}))?\s*;')


def spec_dirs() -> list[Path]:
    """Where games are looked up by name: spec/, then each directory of RULEBOOK_SPECS
    (`:`-separated), in that order."""
    extra = [Path(d) for d in os.environ.get("RULEBOOK_SPECS", "").split(os.pathsep) if d]
    return [spec_dir(), *extra]


def header_of(path: Path) -> tuple[str, str | None] | None:
    """The game id of a spec file and the id it extends (None), from its `game` line; None
    when the file cannot be read or does not start with one."""
    hit = _HEADERS.get(_where(path))
    if hit is not None and hit[0] == _signature(path):
        return hit[2]
    try:
        with open(path, encoding="utf-8") as f:
            return header_in(f.read(8192))
    except (OSError, UnicodeDecodeError):
        return None


def header_in(text: str) -> tuple[str, str | None] | None:
    """`header_of` for a spec's text."""
    m = _HEADER.match(text)
    if m is None:
        return None
    try:
        return string(m.group(1)), (string(m.group(2)) if m.group(2) else None)
    except (ValueError, SyntaxError):
        return None


def games_found(near: Path | None = None) -> dict[str, tuple[Path, str | None]]:
    """Every game id found (in ``near``, a directory searched first, then `spec_dirs`) -> its
    file and the id it extends; the first file with an id wins."""
    out: dict[str, tuple[Path, str | None]] = {}
    for d in ([near] if near is not None else []) + spec_dirs():
        if not d.is_dir():
            continue
        for p in sorted(d.glob("*.rules")):
            h = header_of(p)
            if h is not None and h[0] not in out:
                out[h[0]] = (p, h[1])
    return out


def is_path(name: str) -> bool:
    """Whether a game given on the command line is a file rather than a name."""
    return name.endswith(".rules") or "/" in name or os.sep in name


def find_spec(name: str, near: Path | None = None) -> Path:
    """The spec file of the game ``name``: a path to a .rules file, or a game id (its `game`
    line), looked up in ``near`` (the directory of the file that names it), spec/ and the
    directories of RULEBOOK_SPECS."""
    if is_path(name):
        path = Path(name)
        if not path.is_file():
            reason = "a directory" if path.is_dir() else "no such file"
            raise SpecError(f"{name}: cannot read ({reason})")
        return path
    for d in ([near] if near is not None else []) + spec_dirs():
        path = d / f"{name}.rules"
        if path.is_file() and (header_of(path) or (name,))[0] == name:
            return path
    found = games_found(near)
    if name in found:
        return found[name][0]
    ids = ", ".join(_shown(g) for g in sorted(found)) or "none"
    raise SpecError(f"no game named {name!r} (games found: {ids}; to add one, write a .rules "
                    f"file whose first line is `game {_quoted(name)};` in a directory on "
                    f"RULEBOOK_SPECS, or give the file's path)")


def _shown(game_id: str) -> str:
    """A game id as a one-line message names it: as it is, or quoted when it holds a line
    break or another unprintable character (a `game \"\"\"...\"\"\"` line may)."""
    return game_id if game_id.isprintable() else repr(game_id)


def _quoted(game_id: str) -> str:
    """A game id as a `game` line spells it, on one line (JSON's escapes are the language's)."""
    return json.dumps(game_id, ensure_ascii=False)


def read_source(path: Path) -> SourceFile:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        line = path.read_bytes()[:e.start].count(b"\n") + 1
        raise SpecError(f"not UTF-8 text (byte {e.start})", Span(display(path), line, 1)) \
            from None
    except OSError as e:
        raise SpecError(f"{display(path)}: cannot read ({reason(e)})") from None
    return parse_source(text, display(path))


def parse_source(text: str, name: str) -> SourceFile:
    """The source file of ``text`` (e.g. an editor's unsaved buffer), reported as ``name``."""
    tree = parse(text, name)
    header = tree.children[0]
    game = string(header.children[0])
    title = string(header.children[1]) if header.children[1] is not None else game
    base = string(header.children[2]) if header.children[2] is not None else None
    return SourceFile(name, text, tree, game, title, base)


def reason(e: OSError) -> str:
    """Why a file cannot be read or written, in a few plain words."""
    plain = {errno.ENOENT: "no such file", errno.EISDIR: "a directory",
             errno.EACCES: "permission denied", errno.ENOTDIR: "not a directory",
             errno.ENOSPC: "no space left"}
    return plain.get(e.errno, (e.strerror or str(e)).lower())


def display(path: Path) -> str:
    """The name a file is reported under: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def string(tok: Token) -> str:
    """The text of a string literal (``"..."`` or ``\"\"\"...\"\"\"``)."""
    s = str(tok)
    if s.startswith('"""'):
        return s[3:-3]
    return ast.literal_eval(s)


@dataclass(frozen=True)
class SpecHeader:
    """A spec file known by its text and `game` line only, unparsed: what `spec_texts` reads."""
    path: str
    text: str
    game: str
    base: str | None


def read_header(path: Path) -> SpecHeader:
    """The text of a spec file and the ids of its `game` line, unparsed."""
    key = _where(path)
    sig = _signature(path) if key is not None else None
    hit = _HEADERS.get(key)
    if hit is not None and sig is not None and hit[0] == sig:
        return hit[1]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise SpecError(f"{display(path)}: cannot read") from None
    head = header_in(text)
    if head is None:
        raise SpecError(f"{display(path)}: no `game` line")
    out = SpecHeader(display(path), text, *head)
    if sig is not None and time.time_ns() - sig[0] > _SETTLED_NS:
        if len(_HEADERS) >= 256:
            _HEADERS.clear()
        _HEADERS[key] = (sig, out, header_in(text[:8192]))     # and `header_of`'s answer
    return out


# `read_header`'s answers by path and working directory (a reported path is relative to it),
# with the file's signature when read: a long-lived process (a batch of puzzles, the language
# server) reads and hashes a spec's text for every load otherwise.  An answer is kept only for
# a file last modified a while before it was read: a file written again within the clock's
# granularity of its last write could keep its times and size (the "racy" entries of git's
# index); one written later gets a later modification time.
_HEADERS: dict = {}
_SETTLED_NS = 2_000_000_000


def _where(path: Path) -> tuple | None:
    """`_HEADERS`' key for ``path``: it and the working directory (None without one)."""
    try:
        return str(path), os.getcwd()
    except OSError:
        return None


def _signature(path: Path) -> tuple | None:
    """What changes when a file is written or replaced: its times, size, inode and device."""
    try:
        s = os.stat(path)
    except OSError:
        return None
    return s.st_mtime_ns, s.st_ctime_ns, s.st_size, s.st_ino, s.st_dev


def resolve(game: str, variants: tuple[str, ...], read=read_source) -> tuple[list, dict[str, str]]:
    """The files of ``game``, its `extends` bases first, then the extensions ``variants``
    names, as ``read`` gives them (`read_source`: parsed; `read_header`: the text and the
    `game` line only); and the reading choices the variants name.

    ``game`` is a game id or the path of a .rules file.  A variant is either an extension
    (``tours-de-pouvoir``, or its path) or ``reading:option``; two options of one reading are
    refused.  Whether each reading exists is the checker's to say (`check_choices`)."""
    path = find_spec(game)
    files = [read(path)]
    seen = {files[0].game}
    while files[0].base is not None:
        base = files[0].base
        if base in seen:
            raise SpecError(f"{files[0].path}: `extends` cycle through {base!r}")
        seen.add(base)
        try:
            bpath = find_spec(base, Path(files[0].path).parent)
        except SpecError as e:
            raise SpecError(f"extends {base!r}: {e.message}", *_extends_at(files[0])) from None
        files.insert(0, read(bpath))
    near = path.parent
    readings: dict[str, str] = {}
    for v in variants:
        if ":" in v:
            r, _, opt = (x.strip() for x in v.partition(":"))
            if not r or not opt:
                raise VariantError(f"variant {v!r}: a reading is written READING:OPTION", r or v)
            if readings.get(r, opt) != opt:
                raise VariantError(f"variant {v!r}: reading {r!r} is already {readings[r]!r} "
                                   f"(one option per reading)", r)
            readings[r] = opt
            continue
        ids = [f.game for f in files]
        try:
            ext = read(find_spec(v, near))
        except SpecError:
            exts = sorted(g for g, (_, base) in games_found(near).items() if base in ids)
            raise VariantError(f"variant {v!r}: no expansion of {files[0].game} of that name "
                               f"(expansions: {', '.join(exts) or 'none'}; a reading is "
                               f"written READING:OPTION)", v) from None
        if ext.game in ids:
            raise VariantError(f"variant {v!r}: {ext.game} is already loaded", v)
        if ext.base not in ids:
            raise VariantError(f"variant {v!r}: {ext.game} extends {ext.base!r}, not "
                               f"{files[-1].game!r}", v)
        files.append(ext)
    return files, readings


def _extends_at(f) -> tuple:
    """Where a parsed file's `extends` names its base, as SpecError's span and text (nothing
    for an unparsed one)."""
    if not isinstance(f, SourceFile):
        return ()
    tok = f.tree.children[0].children[2]
    return Span(f.path, tok.line, tok.column), f.text


@gc_paused()
def load_files(game: str, variants: tuple[str, ...]) -> tuple[list[SourceFile], dict[str, str]]:
    """The source files, parsed, base first, and the reading choices named by ``variants``
    (see `resolve`)."""
    return resolve(game, variants)


def spec_texts(game: str, variants: tuple[str, ...]):
    """What `load_files` would read, without parsing it: the (reported path, text) of each
    source file, base first, and the reading choices; None wherever `load_files` would refuse
    (it then says why).  A compiled program is cached by these."""
    try:
        files, readings = resolve(game, variants, read_header)
    except RulebookError:
        return None
    return [(f.path, f.text) for f in files], readings


def texts_digest(game: str, variants: tuple[str, ...], paths: bool = False) -> str:
    """A digest of what `spec_texts` finds: the text of each source file, base first, and the
    reading choices, and with ``paths`` where each file lies (not without: a worker on
    another machine has its checkout elsewhere); "" where `load_files` would refuse."""
    found = spec_texts(game, variants)
    if found is None:
        return ""
    texts, readings = found
    # Remembered by the texts themselves: a text `read_header` served again is the same
    # string, compared by identity and hashed once.
    key = (tuple(texts), tuple(sorted(readings.items())), paths)
    hit = _DIGESTS.get(key)
    if hit is not None:
        return hit
    h = hashlib.sha256()
    for path, text in texts:
        where = f"{path}\0" if paths else ""
        h.update(f"{where}{len(text)}\0".encode() + text.encode("utf-8"))
    h.update(repr(sorted(readings.items())).encode())
    if len(_DIGESTS) >= 256:
        _DIGESTS.clear()
    out = _DIGESTS[key] = h.hexdigest()[:16]
    return out


_DIGESTS: dict = {}


def load_path(path: Path) -> list[SourceFile]:
    """The source files of a spec given by path, its `extends` bases first (looked up beside
    it, in spec/ and on RULEBOOK_SPECS)."""
    name = str(path)
    return resolve(name if is_path(name) else f"./{name}", ())[0]
