"""The Pygments lexer and the grammar agree: every keyword the parser knows is highlighted as
a keyword, and a word the grammar only quotes in a comment is not one."""
from __future__ import annotations

import re

from pygments.token import Keyword, Name, Operator

from solver.docs.lexer import RulesLexer, grammar_keywords
from solver.lang.syntax import parser


def parser_keywords() -> set[str]:
    """The keywords of the built LALR parser: its terminals that match one fixed word."""
    return {t.pattern.value for t in parser().terminals
            if t.pattern.type == "str" and re.fullmatch(r"[A-Za-z_]\w*", t.pattern.value)}


def test_lexer_keywords_are_the_parsers():
    assert set(grammar_keywords()) == parser_keywords()


def test_every_grammar_keyword_is_highlighted_as_a_keyword():
    lexer = RulesLexer()
    wrong = {}
    for kw in sorted(parser_keywords()):
        tok, value = next((t, v) for t, v in lexer.get_tokens(f"{kw} ") if v.strip())
        if value != kw or not (tok in Keyword or tok is Operator.Word):
            wrong[kw] = (tok, value)
    assert not wrong


def test_a_word_quoted_in_a_grammar_comment_is_a_name():
    # grammar/rules.lark's comments quote `king = "king"`; torres names a piece `king`.
    toks = [(t, v) for t, v in RulesLexer().get_tokens("enum Occupant { empty, king }")
            if v.strip()]
    assert (Name, "king") in toks
