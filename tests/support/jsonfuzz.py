"""Hypothesis strategies for the JSON a user hands the command line: the inputs of every
puzzle and the fields of every state, valid (drawn from the types the spec declares) and
corrupted (a value replaced, a key dropped or added, the text cut, bytes that are not UTF-8,
nesting far past any need).  `support.fuzzcases` makes commands of them, `support.fuzzrun`
runs and judges them."""
from __future__ import annotations

import json
from functools import lru_cache

from hypothesis import strategies as st

from solver.lang.codec import to_json
from solver.lang.types import (BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, default,
                               finite)


# ---- values by type --------------------------------------------------------------------------

# Large tables (a 64-square board) get a few entries that are not the default, not all.
_SPARSE = 12


def values(t):
    """A strategy of the concrete values of type ``t`` (see `solver.lang.types`)."""
    match t:
        case BoolT():
            return st.booleans()
        case IntT(lo, hi):
            return st.integers(lo, hi)
        case EnumT(members=m):
            return st.integers(0, len(m) - 1)
        case RecordT(fields=fields):
            return st.tuples(*(values(ft) for _, ft in fields))
        case SeqT(elem=et, cap=cap):
            return st.lists(values(et), max_size=min(cap, 5)).map(tuple)
        case BagT(elem=et, most=most):
            n = finite(et).size
            return _sparse(n, st.integers(1, most), 0)
        case SetT(elem=et):
            return _sparse(finite(et).size, st.just(True), False)
        case MapT(key=kt, val=vt):
            n = finite(kt).size
            if n <= _SPARSE:
                return st.tuples(*(values(vt) for _ in range(n)))
            return _sparse(n, values(vt), default(vt))
    return st.just(default(t))


def _sparse(n: int, entry, blank):
    """A tuple of ``n`` entries, a few of them drawn from ``entry``, the others ``blank``."""
    def build(picks):
        out = [blank] * n
        for i, v in picks:
            out[i] = v
        return tuple(out)
    if n == 0:
        return st.just(())
    return st.lists(st.tuples(st.integers(0, n - 1), entry), max_size=min(n, 6)).map(build)


@lru_cache(maxsize=None)
def json_of(t):
    """A strategy of the JSON of values of type ``t``, as `codec.to_json` writes them (one
    strategy per type: Hypothesis validates each new strategy object it draws from)."""
    return values(t).map(lambda v: to_json(t, v))


# ---- arbitrary and corrupted JSON ---------------------------------------------------------------

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 12),
                    st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                    st.text(max_size=8), st.sampled_from(["", "sand", "king", "x", "0"]))
ANY_JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12)


def paths(j, here=()):
    """Every path (keys and indices) into the JSON value ``j``, the root first."""
    yield here
    if isinstance(j, list):
        for i, x in enumerate(j):
            yield from paths(x, here + (i,))
    elif isinstance(j, dict):
        for k, x in j.items():
            yield from paths(x, here + (k,))


def _replace(j, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(j, list):
        return [(_replace(x, rest, new) if i == head else x) for i, x in enumerate(j)]
    return {k: (_replace(x, rest, new) if k == head else x) for k, x in j.items()}


@st.composite
def corrupted(draw, doc, keys: list[str]):
    """``doc`` (a JSON object) with one to three faults: a value replaced by arbitrary JSON,
    a key dropped, a key added (one of ``keys``, the names the input may have, or any)."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["replace", "replace", "drop", "add", "wrap"]))
        if kind == "replace":
            doc = _replace(doc, draw(st.sampled_from(list(paths(doc)))), draw(ANY_JSON))
        elif kind == "drop" and isinstance(doc, dict) and doc:
            k = draw(st.sampled_from(sorted(doc)))
            doc = {a: b for a, b in doc.items() if a != k}
        elif kind == "add" and isinstance(doc, dict):
            k = draw(st.one_of(st.sampled_from(keys or ["x"]), st.text(max_size=6)))
            doc = {**doc, k: draw(ANY_JSON)}
        elif kind == "wrap":
            doc = [doc]
    return doc


@st.composite
def texts(draw, docs):
    """The bytes of a file holding a document of ``docs``: mostly its JSON, else that JSON cut
    short, with a byte that is not UTF-8, in Latin-1, nested far too deep, or empty."""
    return text_of(draw, draw(docs))


def text_of(draw, doc) -> bytes:
    """`texts` of one document, inside a composite strategy (``draw`` is its draw)."""
    text = json.dumps(doc, ensure_ascii=False)
    kind = draw(st.sampled_from(["plain"] * 6 + ["cut", "byte", "latin1", "deep", "empty"]))
    if kind == "cut":
        return text[:draw(st.integers(0, max(0, len(text) - 1)))].encode("utf-8")
    if kind == "byte":
        data = bytearray(text.encode("utf-8"))
        data.insert(draw(st.integers(0, len(data))), draw(st.sampled_from([0xFF, 0xC3, 0x80, 0xE9])))
        return bytes(data)
    if kind == "latin1":
        return text.replace("}", ', "note": "caf\u00e9"}', 1).encode("latin-1", "replace")
    if kind == "deep":
        n = draw(st.sampled_from([150, 5000, 200_000]))
        return ("[" * n + "]" * n).encode()
    if kind == "empty":
        return b""
    return text.encode("utf-8")
