"""Fuzzing the command line with rules files: programs generated from the grammar itself
(`hypothesis.extra.lark.from_lark`), after a prelude that declares the names they use, and
mutations of a real spec.  `rulebook check FILE` either accepts the file or refuses it with
one report (FILE:LINE:COL: message, the source line and a caret), exit status 2; a file it
accepts, `rulebook moves FILE` lists the moves of.  Never a traceback."""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from lark import Lark
from lark.lexer import PatternStr

from conftest import ROOT
from solver.lang.resources import grammar_path
from support.jsonfuzz import budget, run, write

NAMES = ["n", "m", "x", "p", "T", "R", "Colour", "red", "blue", "f", "inc", "len", "top",
         "push", "pop", "size", "old", "most", "players", "internal", "g"]
STRINGS = ['"g"', '"a b"', '"""doc"""', '""', '"caf\u00e9"']
PRELUDE = """game "g";
enum Colour { red, blue }
record R { x: 0..4, p: Colour }
state { n: 0..4; internal m: 0..4; c: Colour; }
"""
_LARK = Lark(grammar_path().read_text(encoding="utf-8"), parser="lalr", start=["start", "item"])


def _terminals(start: str) -> dict:
    """A strategy per terminal, each token padded with spaces (two never glue into one)."""
    terminals, rules, ignore = _LARK.grammar.compile([start], ())
    used = {t.name for r in rules for t in r.expansion if t.is_term} | set(ignore)
    out = {t.name: st.just(f" {t.pattern.value} ") for t in terminals
           if isinstance(t.pattern, PatternStr)}
    out.update({
        "NAME": st.sampled_from(NAMES).map(lambda s: f" {s} "),
        "INT": st.sampled_from([0, 1, 2, 4, 9, 300, 10**12]).map(lambda i: f" {i} "),
        "STRING": st.sampled_from(STRINGS).map(lambda s: f" {s} "),
        "CMP_OP": st.sampled_from(["==", "!=", "<=", ">=", "<", ">"]).map(lambda s: f" {s} "),
        "ADD_OP": st.sampled_from(["+", "-"]).map(lambda s: f" {s} "),
        "MUL_OP": st.sampled_from(["*", "/", "%"]).map(lambda s: f" {s} "),
        "WS": st.sampled_from([" ", "\n", "\t"]),
        "COMMENT": st.just(" # a comment\n"),
    })
    return {k: v for k, v in out.items() if k in used}


PROGRAMS = from_lark(_LARK, start="start", explicit=_terminals("start"))
ITEMS = st.lists(from_lark(_LARK, start="item", explicit=_terminals("item")), min_size=1,
                 max_size=4).map(lambda items: PRELUDE + "\n".join(
                     i.replace(" override ", " ") for i in items))
SPEC = (ROOT / "spec" / "les-5-tours.rules").read_text(encoding="utf-8")
JUNK = list(";:,.{}()[]=<>+-*/%\"#@ \n0189az_") + ["..", "==", "in", "not", "def", "internal",
                                                   "9999", "\udcff"]


@st.composite
def mutated(draw):
    """The real spec with one to three edits (a character deleted, inserted or replaced, a
    span duplicated or cut)."""
    text = SPEC
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text) - 1))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "duplicate", "cut"]))
        j = min(len(text), i + draw(st.integers(1, 200)))
        if kind == "delete":
            text = text[:i] + text[i + 1:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(JUNK)) + text[i:]
        elif kind == "replace":
            text = text[:i] + draw(st.sampled_from(JUNK)) + text[i + 1:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i] + text[j:]
    return text


def _check_file(capsys, text: str) -> None:
    data = text.encode("utf-8", "surrogateescape")
    with tempfile.TemporaryDirectory() as d:
        path = write(Path(d), "fuzz.rules", data)
        status, _, err = run(capsys, ["check", path], text)
        if status == 2:
            assert err.startswith(f"rulebook: {path}"), err
        else:
            run(capsys, ["moves", path, "--json"], text)


@budget(25)
@given(st.one_of(ITEMS, ITEMS, PROGRAMS))
def test_generated_rules_files(capsys, text):
    _check_file(capsys, text)


@budget(10)
@given(mutated())
def test_mutated_spec_files(capsys, text):
    _check_file(capsys, text)
