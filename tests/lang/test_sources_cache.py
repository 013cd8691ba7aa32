"""A spec's header and digest are kept while its file is unchanged (`sources.read_header`,
`texts_digest`): an edit, even one keeping the size, is read again; a file changed just
before its reading is not kept at all."""
from __future__ import annotations

import os
import time

from solver.lang.codec import decoder, from_json
from solver.lang.errors import InputError
from solver.lang.sources import read_header, texts_digest
from solver.lang.types import BagT, EnumT, IntT, MapT, RecordT, SeqT

SPEC = 'game "cached";\nstate { n: 0..3; }\naction inc() { n += 1; }\n'


def _settled(path, seconds_ago: int = 3600):
    t = time.time_ns() - seconds_ago * 1_000_000_000
    os.utime(path, ns=(t, t))


def test_an_unchanged_file_is_served_again_and_an_edit_read(tmp_path):
    p = tmp_path / "cached.rules"
    p.write_text(SPEC)
    _settled(p)
    first = read_header(p)
    assert read_header(p) is first
    digest = texts_digest(str(p), ())
    assert texts_digest(str(p), ()) == digest
    # The same size, the same times: only the inode and ctime tell (a rename over the file).
    q = tmp_path / "new.rules"
    q.write_text(SPEC.replace("0..3", "0..4"))
    _settled(q)
    os.replace(q, p)
    again = read_header(p)
    assert again is not first and "0..4" in again.text
    assert texts_digest(str(p), ()) != digest


def test_a_file_just_written_is_not_kept(tmp_path):
    p = tmp_path / "cached.rules"
    p.write_text(SPEC)
    first = read_header(p)
    assert read_header(p) is not first and read_header(p).text == first.text


STYLE = EnumT("Style", ("a", "b"))
CARD = RecordT("Card", (("style", STYLE), ("value", IntT(0, 3))))
TOWERS = MapT(STYLE, SeqT(IntT(0, 3), 2))


def test_the_fast_decoding_answers_as_the_full_one():
    """`from_json` tries a decoder built once per type, which names no field: its values are
    the full decoding's, and where the JSON is wrong the full decoding names the field."""
    assert from_json(BagT(CARD, 2), [["a", 1], ["b", 3], ["a", 1]], "x") == \
        (0, 2, 0, 0, 0, 0, 0, 1)
    assert decoder(BagT(CARD, 2))([["b", 0]]) == (0, 0, 0, 0, 1, 0, 0, 0)
    assert from_json(TOWERS, {"b": [3, 1]}, "x") == ((), (3, 1))
    assert from_json(CARD, {"style": "b", "value": 2}, "x") == (1, 2)   # by field name
    errors = [(BagT(CARD, 1), [["a", 1], ["a", 1]], 'x: ["a", 1] appears 2 times, at most 1'),
              (TOWERS, {"c": [3]}, "x key: unknown Style \"c\" (one of a, b)"),
              (SeqT(IntT(0, 3), 2), [1, True], "x[1]: expected a whole number, found true"),
              (CARD, ["a", 4], "x.value: 4 is outside 0..3")]
    for t, j, message in errors:
        try:
            from_json(t, j, "x")
        except InputError as e:
            assert str(e) == message
        else:
            raise AssertionError(f"{j} decoded as {t}")
