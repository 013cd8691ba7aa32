"""What a keyword or a builtin means, for hover: its syntax (the grammar rule that introduces
it), one line of the language reference (docs/language.md's tables, else the grammar's
comment) and an example taken from the shipped specs (the shortest, as the generated
language reference shows)."""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

from ..docs.docrefs import GrammarRule, grammar_examples, grammar_rules
from ..docs.lexer import grammar_keywords
from ..lang.builtins import BUILTINS
from ..lang.resources import REPO, grammar_path, spec_dir

_CODE = re.compile(r"`([^`]+)`")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MEANING = {"meaning", "effect", "values and notes"}


@dataclass(frozen=True)
class Entry:
    word: str
    kind: str           # "keyword" or "builtin"
    syntax: str         # the grammar rule, or the builtin's calls as the reference writes them
    line: str           # one line of the reference
    example: str
    example_from: str


@lru_cache(maxsize=1)
def keywords() -> list[str]:
    return grammar_keywords()


def builtins() -> list[str]:
    return sorted(BUILTINS)


@lru_cache(maxsize=1)
def reference_lines() -> dict[str, tuple[str, str]]:
    """Word -> (the code of its row, the row's meaning), from the tables of
    docs/language.md (a checkout only: the installed package has no docs/)."""
    path = REPO / "docs" / "language.md"
    if not path.is_file():
        return {}
    out: dict[str, tuple[str, str]] = {}
    header: list[str] | None = None
    for ln in path.read_text(encoding="utf-8").split("\n"):
        if not ln.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        if len(cells) < 2:
            continue
        if len(header) > 1 and header[1] in _MEANING:
            meaning = _plain(cells[1])
        else:
            meaning = "; ".join(f"{h}: {_plain(c)}" for h, c in zip(header[1:], cells[1:]))
        for code in _CODE.findall(cells[0]):
            m = _WORD.match(code)
            if m and m.group() not in out:
                out[m.group()] = (code, meaning)
    return out


def _plain(cell: str) -> str:
    return cell.replace("**", "").replace("\\|", "|")


class Examples:
    """The grammar's rules, and their examples from the shipped specs, found once: parsing
    every spec takes seconds, so the checking process does it (`examples(wait=True)`) and
    `provide`s them to the server's; a hover asked before that quotes a line of a spec
    instead of waiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._examples: dict[str, tuple[str, str]] | None = None

    @staticmethod
    @lru_cache(maxsize=1)
    def grammar() -> tuple[GrammarRule, ...]:
        return tuple(grammar_rules(grammar_path().read_text(encoding="utf-8")))

    def provide(self, found: dict[str, tuple[str, str]]) -> None:
        """Take the examples another process found (`examples(wait=True)` there)."""
        self._examples = found

    def examples(self, wait: bool = False) -> dict[str, tuple[str, str]] | None:
        """Rule name -> (example, spec file); None until they are found (``wait``: find
        them now)."""
        if self._examples is not None or not wait:
            return self._examples
        self._lock.acquire()
        try:
            if self._examples is None:
                rules = grammar_rules(grammar_path().read_text(encoding="utf-8"))
                grammar_examples(rules, sorted(spec_dir().glob("*.rules")))
                self._examples = {r.name: (r.example, r.example_from) for r in rules}
            return self._examples
        finally:
            self._lock.release()

    def entry(self, word: str) -> Entry | None:
        """What ``word`` is, when it is a keyword or a builtin of the language."""
        ref = reference_lines()
        if word in BUILTINS:
            code, line = ref.get(word, (f"{word}(...)", ""))
            ex, where = self._builtin_example(word)
            return Entry(word, "builtin", code, line or reference_sentence(word), ex, where)
        if word not in keywords():
            return None
        rules = _owners(list(self.grammar()), word)
        code, line = ref.get(word, ("", ""))
        line = line or reference_sentence(word) or next((r.comment for r in rules if r.comment),
                                                        "")
        pat = re.compile(r"\b" + re.escape(word) + r"\b")
        found = self.examples() or {}
        ex = next((found[r.name] for r in rules if r.name in found
                   and pat.search(found[r.name][0]) and found[r.name][0].strip() != word), None)
        ex = ex or self._spec_line(word)
        return Entry(word, "keyword", "\n".join(r.text for r in rules) or code, line, *ex)

    def _builtin_example(self, word: str) -> tuple[str, str]:
        """The first line of a shipped spec that calls ``word``."""
        return self._spec_line(word, r"\s*\(")

    @lru_cache(maxsize=256)
    def _spec_line(self, word: str, after: str = r"\b") -> tuple[str, str]:
        """The first line of a shipped spec that writes ``word`` (outside strings)."""
        pat = re.compile(r"\b" + re.escape(word) + after)
        for path in sorted(spec_dir().glob("*.rules")):
            for ln in path.read_text(encoding="utf-8").split("\n"):
                code = ln.split("#", 1)[0]
                if pat.search(code) and '"' not in code:
                    return code.strip(), path.name
        return "", ""


def _owners(rules: list[GrammarRule], word: str) -> list[GrammarRule]:
    """The grammar rules that quote ``word`` (at most three; first those it starts), each
    list of keywords (`!quant_kw: "forall" | ...`) preceded by the rule that uses it."""
    quoted = f'"{word}"'
    found = [r for r in rules if quoted in r.text]
    found.sort(key=lambda r: re.findall(r'"([A-Za-z_]\w*)"', r.text)[:1] != [word])
    out: list[GrammarRule] = []
    for r in found:
        if re.fullmatch(r'[^:]*:\s*"\w+"(\s*\|\s*"\w+")*\s*', r.text):
            out += [u for u in rules if u is not r and re.search(rf"\b{r.name}\b", u.text)
                    and u not in out][:1]
        if r not in out:
            out.append(r)
    return out[:3]


@lru_cache(maxsize=256)
def reference_sentence(word: str) -> str:
    """The first sentence of the language reference (docs/language.md, part 1) that writes
    ``word`` as code."""
    path = REPO / "docs" / "language.md"
    if not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8").split("\n## 2.")[0]
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    pat = re.compile(r"`" + re.escape(word) + r"(?!\w)[^`]*`")
    for para in re.split(r"\n\s*\n", text):
        if para.lstrip().startswith(("|", "#")):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z`*])", " ".join(para.split())):
            if pat.search(sentence):
                sentence = re.sub(r"^\d+\.\s+", "", sentence)
                return sentence if len(sentence) <= 300 else sentence[:297] + "..."
    return ""


def markdown(e: Entry) -> str:
    """The hover of a keyword or builtin."""
    out = [f"**{e.word}** ({e.kind})", f"```\n{e.syntax}\n```" if e.syntax else ""]
    if e.line:
        out.append(e.line)
    if e.example:
        out.append(f"Example (from `spec/{e.example_from}`):\n```rules\n{e.example}\n```")
    return "\n\n".join(x for x in out if x)
