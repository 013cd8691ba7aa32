"""reStructuredText snippets shared by the generated pages (``docpages``, ``docrefs``): titles,
code blocks, escaped text, tables and cross-references, each returned as text to join."""
from __future__ import annotations

import re
import textwrap


def title(text: str, ch: str) -> str:
    """A section title underlined with ``ch``."""
    return f"{text}\n{ch * max(len(text), 3)}\n\n"


def code(text: str, lang: str = "rulebook") -> str:
    """A ``code-block`` in ``lang`` (dedented, stripped)."""
    return f".. code-block:: {lang}\n\n{textwrap.indent(textwrap.dedent(text).strip(), '   ')}\n\n"


def literal(text: str) -> str:
    """A literal block (a command's help, say); "(no output)" when empty."""
    return "::\n\n" + textwrap.indent(text.rstrip() or "(no output)", "   ") + "\n\n"


def raw_html(html: str) -> str:
    """Raw HTML (an SVG drawing) passed through to the page."""
    return ".. raw:: html\n\n" + textwrap.indent(html.strip(), "   ") + "\n\n"


def esc(text: str) -> str:
    """Text safe inside a reST paragraph or table cell."""
    return re.sub(r"([\\`*_|])", r"\\\1", " ".join(str(text).split()))


def inline_code(text: str) -> str:
    """Inline literal text (escaped plain text when it holds a double backquote)."""
    text = " ".join(str(text).split())
    return f"``{text}``" if text and "``" not in text else esc(text)


def table(header: list[str], rows: list[list[str]], widths: str | None = None) -> str:
    """A ``list-table`` with one header row; an empty cell is written ``..``."""
    out = ".. list-table::\n   :header-rows: 1\n"
    if widths:
        out += f"   :widths: {widths}\n"
    out += "\n"
    for row in [header] + rows:
        for i, cell in enumerate(row):
            out += ("   * - " if i == 0 else "     - ") + (cell or "..") + "\n"
    return out + "\n"


def ref(kind: str, full: str, text: str | None = None) -> str:
    """A ``:rulebook:KIND:`` cross-reference to ``full`` (shown as ``text`` if given)."""
    return f":rulebook:{kind}:`{text} <{full}>`" if text else f":rulebook:{kind}:`{full}`"
