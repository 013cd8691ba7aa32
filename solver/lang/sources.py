"""Find and read spec files and follow their `extends` chain: the text the checker starts from,
kept apart so that the tools that only read headers (docs, CLI) need no checker."""
from __future__ import annotations

import ast
import contextlib
import gc
import os
from dataclasses import dataclass
from pathlib import Path

from lark import Token, Tree

from .errors import Span, SpecError
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


def find_spec(name: str) -> Path:
    path = spec_dir() / f"{name}.rules"
    if not path.is_file():
        # Games of one's own (the tutorial's): RULEBOOK_SPECS lists more directories to search.
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
        raise SpecError(f"not UTF-8 text (byte {e.start})", Span(display(path), line, 1)) \
            from None
    except OSError as e:
        raise SpecError(f"cannot read: {e.strerror}", Span(display(path), 0, 0)) from None
    return parse_source(text, display(path))


def parse_source(text: str, name: str) -> SourceFile:
    """The source file of ``text`` (e.g. an editor's unsaved buffer), reported as ``name``."""
    tree = parse(text, name)
    header = tree.children[0]
    game = string(header.children[0])
    title = string(header.children[1]) if header.children[1] is not None else game
    base = string(header.children[2]) if header.children[2] is not None else None
    return SourceFile(name, text, tree, game, title, base)


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


def load_path(path: Path) -> list[SourceFile]:
    """The source files of a spec given by path, its `extends` bases (from spec/) first."""
    files = [read_source(Path(path))]
    while files[0].base is not None:
        files.insert(0, read_source(find_spec(files[0].base)))
    return files
