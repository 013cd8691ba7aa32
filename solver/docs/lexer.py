"""A Pygments lexer for the rules language (``.rules`` files).

Its keywords are read from the Lark grammar itself (every quoted word in ``grammar/rules.lark``),
so a keyword added to the language is highlighted without touching this file.  Registered as a
``pygments.lexers`` entry point (``rulebook``), and added to Sphinx by ``solver.docs.sphinxext``.
"""
from __future__ import annotations

import re

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String, Text,
                            Whitespace)

from ..lang.resources import grammar_path

# Words that are operators or constants rather than structure.
_WORD_OPS = {"and", "or", "not", "in", "implies", "with", "where"}
_CONSTANTS = {"true", "false"}
# Declarations whose next word is the name they declare, and how that name is shown.
_DECLARES = {
    "action": Name.Function, "chance": Name.Function, "def": Name.Function,
    "proc": Name.Function, "invariant": Name.Function, "transition": Name.Function,
    "example": Name.Function, "puzzle": Name.Function, "extend": Name.Function,
    "enum": Name.Class, "record": Name.Class, "type": Name.Class, "reading": Name.Class,
    "param": Name.Constant, "const": Name.Constant, "requires": Name.Label,
    "check": Name.Label, "input": Name.Variable,
}
_BUILTINS = ("len", "top", "bottom", "push", "push_bottom", "pop", "pop_bottom", "size", "old",
             "least", "most", "abs", "subbags", "component", "components")


def grammar_keywords() -> list[str]:
    """Every keyword of the grammar: its quoted words (outside its `//` comments, which quote
    spec text such as `king = "king"`)."""
    text = grammar_path().read_text(encoding="utf-8")
    code = "\n".join(ln.split("//", 1)[0] for ln in text.split("\n"))
    return sorted(set(re.findall(r'"([A-Za-z_][A-Za-z_0-9]*)"', code)))


def _builtins() -> tuple[str, ...]:
    try:
        from ..lang.builtins import BUILTINS
        return tuple(sorted(BUILTINS))
    except ImportError:  # pragma: no cover - the lexer must load without the checker
        return _BUILTINS


_KEYWORDS = grammar_keywords()


class RulesLexer(RegexLexer):
    """The rules language of rulebook (``spec/*.rules``)."""

    name = "Rulebook rules"
    aliases = ["rulebook", "rules"]
    filenames = ["*.rules"]
    mimetypes = ["text/x-rulebook"]
    url = "https://example.invalid/rulebook"

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"#[^\n]*", Comment.Single),
            (r'"""(.|\n)*?"""', String.Doc),
            (r'"([^"\\\n]|\\.)*"', String.Double),
            (r"\b(" + "|".join(sorted(_DECLARES, key=len, reverse=True)) + r")(\s+)"
             r"([A-Za-z_][A-Za-z0-9_]*)",
             bygroups(Keyword.Declaration, Whitespace, Name.Entity)),
            (words(sorted(_CONSTANTS), prefix=r"\b", suffix=r"\b"), Keyword.Constant),
            # A call: a def named like a keyword (`legal(t)`) is still a call.
            (words(_builtins(), prefix=r"\b", suffix=r"\b(?=\s*\()"), Name.Builtin),
            (r"(?!(?:if|not|and|or|in|then|else|implies|state)\b)"
             r"[A-Za-z_][A-Za-z0-9_]*(?=\s*\()", Name.Function),
            (words(sorted(w for w in _KEYWORDS if w in _WORD_OPS), prefix=r"\b", suffix=r"\b"),
             Operator.Word),
            (words([w for w in _KEYWORDS if w not in _WORD_OPS | _CONSTANTS],
                   prefix=r"\b", suffix=r"\b"), Keyword),
            (r"[A-Z][A-Za-z0-9_]*", Name.Class),
            (r"[a-z_][A-Za-z0-9_]*", Name),
            (r"[0-9]+", Number.Integer),
            (r"\.\.|==|!=|<=|>=|\+=|-=|[-+*/%<>=@]", Operator),
            (r"[{}()\[\],;:.]", Punctuation),
            (r".", Text),
        ],
    }

    def get_tokens_unprocessed(self, text, stack=("root",)):
        # Declared names get the token type of their declaration (an action is a function, an
        # enum a class...), which one regex group cannot choose.
        pending = None
        for index, token, value in super().get_tokens_unprocessed(text, stack):
            if token is Keyword.Declaration:
                pending = _DECLARES.get(value)
                yield index, Keyword, value
                continue
            if token is Name.Entity and pending is not None:
                yield index, pending, value
                pending = None
                continue
            yield index, token, value
