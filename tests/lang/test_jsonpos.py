"""The positions of JSON values, by the paths the puzzle checks name them with."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as hs

from solver.lang.errors import InputError
from solver.lang.jsonpos import locate, positions

TEXT = '{"a": 1,\n "b": [10, {"c": "x"}],\n  "d": {}, "e": []}'


def test_every_value_has_its_line_and_column():
    assert positions(TEXT, "f") == {
        "f": (1, 1), "f.a": (1, 7), "f.b": (2, 7), "f.b[0]": (2, 8), "f.b[1]": (2, 12),
        "f.b[1].c": (2, 18), "f.d": (3, 8), "f.e": (3, 17)}


def test_locate_takes_the_deepest_value_written():
    e = locate(InputError("f.b[1].c.x: not a record"), "f", TEXT)
    assert e.headline() == "f:2:18: b[1].c.x: not a record"
    assert locate(InputError("f: not a puzzle"), "f", TEXT).headline() == "f:1:1: not a puzzle"
    # A message that names no path of the document is left alone.
    other = InputError("no spec named 'x'")
    assert locate(other, "f", TEXT) is other


json_values = hs.recursive(
    hs.none() | hs.booleans() | hs.integers() | hs.text(max_size=5),
    lambda kids: hs.lists(kids, max_size=3)
    | hs.dictionaries(hs.text("abc", min_size=1, max_size=3), kids, max_size=3),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(json_values, hs.sampled_from([None, 1, 2]))
def test_each_position_is_where_that_value_is_written(value, indent):
    """Decoding the text from a value's position gives that value back, for every path."""
    text = json.dumps(value, indent=indent)
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    dec = json.JSONDecoder()

    def walk(v, path):
        yield path, v
        if isinstance(v, dict):
            for k, x in v.items():
                yield from walk(x, f"{path}.{k}")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                yield from walk(x, f"{path}[{i}]")
    pos = positions(text, "r")
    expected = dict(walk(value, "r"))
    assert set(pos) == set(expected)
    for path, v in expected.items():
        line, col = pos[path]
        assert dec.raw_decode(text, starts[line - 1] + col - 1)[0] == v
