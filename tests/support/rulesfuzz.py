"""Rules files for the fuzzing: programs generated from the grammar itself
(`hypothesis.extra.lark.from_lark`), after a prelude that declares the names they use, and
mutations of a real spec.  `rulebook check FILE` either accepts the file or refuses it with
one report (FILE:LINE:COL: message, the source line and a caret), exit status 2; a file it
accepts, `rulebook moves FILE` lists the moves of and `rulebook play FILE` plays."""
from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from lark import Lark
from lark.lexer import PatternStr

from solver.lang.resources import grammar_path
from support.fuzzcases import FILE, Case

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["n", "m", "x", "p", "T", "R", "Colour", "red", "blue", "f", "inc", "len", "top",
         "push", "pop", "size", "old", "most", "players", "internal", "g"]
STRINGS = ['"g"', '"a b"', '"""doc"""', '""', '"caf\u00e9"', '"\u0085"']
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
                                                   "9999", "\udcff", "\x85", "\x0c", "\u2028",
                                                   "\r", "\x00"]


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


def _case(stream: str, text: str, seed: int) -> Case:
    return Case(stream, ("check", FILE), text.encode("utf-8", "surrogateescape"),
                suffix=".rules", valid=False,
                then=(("moves", FILE, "--json"),
                      ("play", FILE, "--games", "2", "--seed", str(seed), "--time-limit", "5")))


def rules_generated():
    return st.builds(lambda t, s: _case("rules", t, s), st.one_of(ITEMS, ITEMS, PROGRAMS),
                     st.integers(0, 99))


def rules_mutated():
    return st.builds(lambda t, s: _case("rules-mutated", t, s), mutated(), st.integers(0, 99))
