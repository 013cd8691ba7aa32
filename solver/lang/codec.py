"""JSON <-> values, driven by the type: the format of puzzles, states and answers.

enum -> its name; record -> a list of its fields in order (an object by field name is accepted
too); seq -> a list; bag -> a list of its elements (repeated); set -> a list; map with enum or
bool keys -> an object by key name (never a list: a list is refused, not read by position); a
map of scalars keyed by a record of two integers (a board) -> a list of rows, row y a list by x;
other maps -> a list indexed by key.  An enum member may declare its JSON spelling
(`empty = null`)."""
from __future__ import annotations

from .errors import InputError
from .types import (BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, TextT, Type, default,
                    finite)


def to_json(t: Type, v):
    match t:
        case BoolT() | IntT() | TextT():
            return v
        case EnumT(members=m, json=spelt):
            return spelt[v] if spelt else m[v]
        case RecordT(fields=fields):
            return [to_json(ft, x) for (_, ft), x in zip(fields, v)]
        case SeqT(elem=et):
            return [to_json(et, x) for x in v]
        case BagT(elem=et):
            vals = finite(et).values
            return [to_json(et, vals[i]) for i, n in enumerate(v) for _ in range(n)]
        case SetT(elem=et):
            vals = finite(et).values
            return [to_json(et, vals[i]) for i, b in enumerate(v) if b]
        case MapT(key=kt, val=vt):
            vals = finite(kt).values
            if isinstance(kt, (EnumT, BoolT)):
                return {_key_name(kt, k): to_json(vt, x) for k, x in zip(vals, v)}
            if grid_axes(t) is not None:
                xs, ys = grid_axes(t)
                index = finite(kt).index
                return [[to_json(vt, v[index[(x, y)]]) for x in xs] for y in ys]
            return [to_json(vt, x) for x in v]
    raise TypeError(t)


def _key_name(t: Type, k) -> str:
    if isinstance(t, EnumT):
        return t.members[k]
    return "true" if k else "false"


def from_json(t: Type, j, where: str):
    """Decode ``j`` as a value of ``t``; ``where`` names the field for error messages."""
    # The common shapes first, by a decoder built once per type that names no field: on
    # anything else (or anything wrong) the full decoding below gives the value or the error.
    try:
        return decoder(t)(j)
    except (_Refused, LookupError, TypeError):
        # A refusal, a name or an index the fast path does not know, a shape it does not
        # read: the full decoding says what is wrong.  Any other error is a bug, and shown.
        return _from_json(t, j, where)


def _from_json(t: Type, j, where: str):
    match t:
        case BoolT():
            if not isinstance(j, bool):
                raise InputError(f"{where}: expected true or false, found {_show(j)}")
            return j
        case IntT(lo, hi):
            if isinstance(j, bool) or not isinstance(j, int):
                raise InputError(f"{where}: expected a whole number, found {_show(j)}")
            if not lo <= j <= hi:
                raise InputError(f"{where}: {j} is outside {lo}..{hi}")
            return j
        case EnumT(name=n, members=m, json=spelt):
            if spelt:
                for i, s in enumerate(spelt):
                    if type(s) is type(j) and s == j:
                        return i
                raise InputError(f"{where}: unknown {n} {_show(j)} (one of "
                                 f"{', '.join(_show(s) for s in spelt)})")
            if not isinstance(j, str) or j not in m:
                raise InputError(f"{where}: unknown {n} {_show(j)} (one of {', '.join(m)})")
            return m.index(j)
        case RecordT(name=n, fields=fields):
            if isinstance(j, dict):
                extra = set(j) - {f for f, _ in fields}
                if extra:
                    raise InputError(f"{where}: {n} has no field {sorted(extra)[0]!r}")
                missing = [f for f, _ in fields if f not in j]
                if missing:
                    raise InputError(f"{where}: {n} needs the field {missing[0]!r}")
                j = [j[f] for f, _ in fields]
            if not isinstance(j, list) or len(j) != len(fields):
                raise InputError(f"{where}: a {n} is a list of {len(fields)} "
                                 f"({', '.join(f for f, _ in fields)}), found {_show(j)}")
            return tuple(from_json(ft, x, f"{where}.{fn}") for (fn, ft), x in zip(fields, j))
        case SeqT(elem=et, cap=cap):
            if not isinstance(j, list):
                raise InputError(f"{where}: expected a list, found {_show(j)}")
            if len(j) > cap:
                raise InputError(f"{where}: {len(j)} elements, at most {cap}")
            return tuple(from_json(et, x, f"{where}[{i}]") for i, x in enumerate(j))
        case BagT(elem=et, most=most):
            if not isinstance(j, list):
                raise InputError(f"{where}: expected a list, found {_show(j)}")
            counts = [0] * finite(et).size
            index = finite(et).index
            for i, x in enumerate(j):
                counts[index[from_json(et, x, f"{where}[{i}]")]] += 1
            for i, n in enumerate(counts):
                if n > most:
                    shown = to_json(et, finite(et).values[i])
                    raise InputError(f"{where}: {_show(shown)} appears {n} times, at most {most}")
            return tuple(counts)
        case SetT(elem=et):
            if not isinstance(j, list):
                raise InputError(f"{where}: expected a list, found {_show(j)}")
            flags = [False] * finite(et).size
            for i, x in enumerate(j):
                flags[finite(et).index[from_json(et, x, f"{where}[{i}]")]] = True
            return tuple(flags)
        case MapT(key=kt, val=vt):
            keys = finite(kt).values
            if isinstance(j, dict):
                if not isinstance(kt, (EnumT, BoolT)):
                    raise InputError(f"{where}: expected a list indexed by {kt}")
                out = [default(vt)] * len(keys)
                for name, x in j.items():
                    k = from_json(kt, name if isinstance(kt, EnumT) else name == "true",
                                  f"{where} key")
                    out[finite(kt).index[k]] = from_json(vt, x, f"{where}.{name}")
                return tuple(out)
            if isinstance(kt, (EnumT, BoolT)):
                shown = ", ".join(_key_name(kt, k) for k in keys)
                raise InputError(f"{where}: expected an object keyed by {kt} ({shown}), "
                                 f"found {_show(j)}")
            axes = grid_axes(t)
            if axes is not None and isinstance(j, list) and all(isinstance(r, list) for r in j):
                xs, ys = axes
                if len(j) != len(ys):
                    raise InputError(f"{where}: {len(j)} rows, expected {len(ys)}")
                index = finite(kt).index
                out = [default(vt)] * len(keys)
                for yi, (y, row) in enumerate(zip(ys, j)):
                    if len(row) != len(xs):
                        raise InputError(f"{where}[{yi}]: {len(row)} columns, expected "
                                         f"{len(xs)}")
                    for xi, (x, cell) in enumerate(zip(xs, row)):
                        out[index[(x, y)]] = from_json(vt, cell, f"{where}[{yi}][{xi}]")
                return tuple(out)
            if isinstance(j, list):
                if len(j) > len(keys):
                    raise InputError(f"{where}: {len(j)} entries, at most {len(keys)}")
                out = [default(vt)] * len(keys)
                for i, x in enumerate(j):
                    out[i] = from_json(vt, x, f"{where}[{i}]")
                return tuple(out)
            raise InputError(f"{where}: expected an object or a list, found {_show(j)}")
    raise TypeError(t)


class _Refused(Exception):
    """The fast decoding does not take this JSON (`from_json` then decodes it in full)."""


def _refuse(j=None):
    raise _Refused


# Decoders by type, by identity (a type's own hash walks all of it): the types of a compiled
# game live as long as it.  Each entry holds its type, so its id is not reused meanwhile.
_DECODERS: dict = {}


def decoder(t: Type):
    """A function decoding the JSON of ``t`` in its common shapes (a record as a list, a map
    keyed by an enum as an object; no enum spelt otherwise than by name), raising anything
    where `from_json` might not give that very value."""
    hit = _DECODERS.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    f = _decoder(t)
    if len(_DECODERS) >= 4096:
        _DECODERS.clear()
    _DECODERS[id(t)] = (t, f)
    return f


def _decoder(t: Type):
    match t:
        case BoolT():
            return lambda j: j if j is True or j is False else _refuse()
        case IntT(lo, hi):
            return lambda j: j if type(j) is int and lo <= j <= hi else _refuse()
        case EnumT(members=m, json=spelt):
            if spelt:
                return _refuse
            names: dict = {}
            for i, name in enumerate(m):
                names.setdefault(name, i)
            return lambda j: names[j] if type(j) is str else _refuse()
        case RecordT(fields=fields):
            fs = tuple(decoder(ft) for _, ft in fields)
            n = len(fs)
            if n == 2:
                f0, f1 = fs
                return lambda j: (f0(j[0]), f1(j[1])) if type(j) is list and len(j) == 2 \
                    else _refuse()
            return lambda j: tuple([f(x) for f, x in zip(fs, j)]) \
                if type(j) is list and len(j) == n else _refuse()
        case SeqT(elem=et, cap=cap):
            fe = decoder(et)
            return lambda j: tuple([fe(x) for x in j]) \
                if type(j) is list and len(j) <= cap else _refuse()
        case BagT(elem=et, most=most):
            fe, index, size = decoder(et), finite(et).index, finite(et).size

            def bag(j):
                if type(j) is not list:
                    _refuse()
                counts = [0] * size
                for x in j:
                    counts[index[fe(x)]] += 1
                if counts and max(counts) > most:
                    _refuse()
                return tuple(counts)
            return bag
        case SetT(elem=et):
            fe, index, size = decoder(et), finite(et).index, finite(et).size

            def flags(j):
                if type(j) is not list:
                    _refuse()
                out = [False] * size
                for x in j:
                    out[index[fe(x)]] = True
                return tuple(out)
            return flags
        case MapT(key=EnumT() as kt, val=vt):
            fk, fv, index = decoder(kt), decoder(vt), finite(kt).index
            blank = [default(vt)] * finite(kt).size

            def by_name(j):
                if type(j) is not dict:
                    _refuse()
                out = list(blank)
                for name, x in j.items():
                    out[index[fk(name)]] = fv(x)
                return tuple(out)
            return by_name
    return _refuse


def grid_axes(t: Type):
    """For a map of scalars keyed by a record of two integer fields (a board), the values of
    its first and second field; such a map is written as rows (one per second-field value),
    each a list by first-field value.  None for any other type."""
    if not isinstance(t, MapT) or not isinstance(t.val, (BoolT, IntT, EnumT)):
        return None
    kt = t.key
    if not (isinstance(kt, RecordT) and len(kt.fields) == 2
            and all(isinstance(ft, IntT) for _, ft in kt.fields)):
        return None
    (_, fx), (_, fy) = kt.fields
    return list(range(fx.lo, fx.hi + 1)), list(range(fy.lo, fy.hi + 1))


def _show(j) -> str:
    import json
    s = json.dumps(j)
    return s if len(s) < 40 else s[:37] + "..."
