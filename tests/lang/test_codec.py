"""The JSON decoding of values (solver/lang/codec.py): the fast decoder of the common shapes
gives way to the full decoding on anything it does not take, and a bug in it is shown."""
from __future__ import annotations

import pytest

from solver.lang import codec
from solver.lang.errors import InputError
from solver.lang.types import EnumT, IntT, RecordT


def test_what_the_fast_path_refuses_the_full_decoding_answers_or_names():
    t = RecordT("pair", (("n", IntT(0, 3)), ("c", EnumT("colour", ("red", "blue")))))
    assert codec.from_json(t, [2, "blue"], "x") == (2, 1)
    assert codec.from_json(t, {"n": 2, "c": "blue"}, "x") == (2, 1)    # an object: in full
    with pytest.raises(InputError, match="x"):
        codec.from_json(t, [2, "green"], "x")                          # not a member


def test_a_bug_in_the_fast_path_is_not_taken_for_a_refusal(monkeypatch):
    def broken(t):
        return lambda j: 1 / 0
    monkeypatch.setattr(codec, "decoder", broken)
    with pytest.raises(ZeroDivisionError):
        codec.from_json(IntT(0, 3), 2, "x")
