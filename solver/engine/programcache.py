"""Checked programs kept on disk, so that compiling a spec already compiled is a load.

A program is stored under a digest of everything its checking reads: the text and reported
path of each source file, the reading choices and parameters, the source of the checker and
the grammar (any edit of `solver/lang`, `solver/engine` or the grammar changes every key), and
the versions of Python, Lark and this cache's format.  So an entry is never stale: a spec
edited, a parameter changed or the package upgraded is a miss, and the program is checked
afresh and stored.  Nothing read from the cache is trusted further than that: an entry that
does not load is checked afresh and rewritten.

Where: ``$RULEBOOK_PROGRAM_CACHE`` if set (``off`` turns the cache off), else
``$XDG_CACHE_HOME/rulebook/programs`` or ``~/.cache/rulebook/programs``.  At most `KEEP`
entries are kept (about 0.5 MB each), the least recently used removed first.  Writes go to a
temporary file renamed into place, so processes sharing the folder never read half an entry.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import sys
import tempfile
import zlib
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

import lark

from ..lang.check import check_program
from ..lang.resources import cache_home, grammar_path
from ..lang.sources import parse_source
from .evaluate import const_value

FORMAT = 1          # of an entry; bump when what is pickled changes shape
KEEP = 200          # entries kept in the folder


def cache_dir() -> Path | None:
    """The folder of the cache, or None when it is turned off."""
    own = os.environ.get("RULEBOOK_PROGRAM_CACHE")
    if own:
        return None if own.strip().lower() == "off" else Path(own)
    return cache_home() / "programs"


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the code a checked program depends on: the checker, the engine (whose
    constant evaluator checking calls) and the grammar, with the versions of Python and Lark.
    Read once per process."""
    h = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{lark.__version__}\0".encode())
    here = Path(__file__).resolve().parent
    for folder in (here.parent / "lang", here):
        for f in sorted(folder.glob("*.py")):
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(grammar_path().read_bytes())
    return h.hexdigest()


def key(texts: list, readings: dict, params: tuple) -> str:
    """The digest a program is stored under (see the module's doc)."""
    h = hashlib.sha256(code_digest().encode())
    for path, text in texts:
        h.update(f"\0{path}\0{len(text)}\0".encode() + text.encode("utf-8"))
    h.update(repr(sorted(readings.items())).encode())
    h.update(repr(sorted(params)).encode())
    return h.hexdigest()


def checked(texts: list, readings: dict, params: tuple):
    """``check_program`` of the source files ``texts`` ((reported path, text) each, base first)
    under ``readings`` and ``params``: loaded from the cache when it holds them, else checked
    and stored.  Errors in the spec are raised as by checking (nothing is stored)."""
    where = cache_dir()
    k = key(texts, readings, params) if where is not None else None
    if k is not None:
        got = _read(where / f"{k}.program")
        if got is not None:
            return got
    files = [parse_source(text, path) for path, text in texts]
    result = check_program(files, dict(params), readings, const_value)
    if k is not None:
        _write(where, f"{k}.program", result)
    return result


def _read(path: Path):
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        got = pickle.loads(zlib.decompress(data))
    except Exception:                   # a damaged or foreign entry: check afresh
        return None
    try:
        os.utime(path)                  # recently used: kept longest
    except OSError:
        pass
    return got


def _write(where: Path, name: str, result) -> None:
    """Store ``result``; a folder that cannot be written only costs the next compile."""
    buf = io.BytesIO()
    tmp = None
    try:
        _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(result)
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(zlib.compress(buf.getvalue(), 1))
        os.replace(tmp, where / name)
        tmp = None
        _trim(where)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _trim(where: Path) -> None:
    entries = []
    for p in where.glob("*.program"):
        try:
            entries.append((p.stat().st_mtime, p))
        except OSError:
            pass
    entries.sort()
    for _, p in entries[:max(0, len(entries) - KEEP)]:
        try:
            p.unlink()
        except OSError:
            pass


def frozen_mapping(d: dict) -> MappingProxyType:
    """A read-only view of ``d`` (how a pickled `Symbols` mapping is rebuilt)."""
    return MappingProxyType(d)


_TOKEN_SLOTS = ("type", "start_pos", "value", "line", "column", "end_line", "end_column",
                "end_pos")


class _Pickler(pickle.Pickler):
    """Pickles the read-only mappings of `Symbols` (`types.MappingProxyType`, which pickle
    cannot name) as the dicts they show, and Lark's tokens whole: their own pickling keeps
    neither where a token ends nor its speed (each is rebuilt through `Token.__new__`); here
    the string is made and the positions set by pickle itself."""

    def reducer_override(self, obj):
        t = type(obj)
        if t is lark.Token:
            return str.__new__, (lark.Token, str(obj)), \
                (None, {k: getattr(obj, k, None) for k in _TOKEN_SLOTS})
        if t is MappingProxyType:
            return frozen_mapping, (dict(obj),)
        return NotImplemented
