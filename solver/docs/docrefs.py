"""The documentation's reference pages, as reStructuredText: the language reference from the
Lark grammar, the CLI reference from the argument parser, and the cookbook and tutorial outputs
from running the real commands in this process.  Like ``docpages``, no Sphinx here.

The command line is a layer above the docs: its entry point (``main(argv) -> int``) and argument
parser are handed in by the caller (``sphinxext`` imports the module that ``conf.py`` names in
``rulebook_cli``, as sphinx-argparse does), never imported from here."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from . import rst
from .docpages import Page
from ..lang.errors import RulebookError


# ---- running the real commands --------------------------------------------------------------

def run_cli(main, argv: list[str], cwd: Path, env: dict | None = None) -> tuple[int, str]:
    """Run ``rulebook ARGV`` in this process through the entry point ``main``, in ``cwd``;
    return (exit status, stdout+stderr)."""
    buf = io.StringIO()
    old_cwd = os.getcwd()
    old_env = {k: os.environ.get(k) for k in (env or {})}
    try:
        os.chdir(cwd)
        os.environ.update(env or {})
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                code = main(list(argv))
            except SystemExit as e:  # argparse's --help and usage errors
                code = e.code if isinstance(e.code, int) else 0
    finally:
        os.chdir(old_cwd)
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    # Progress lines ("  .. ") are for a terminal; timings vary from run to run.
    lines = [ln for ln in buf.getvalue().splitlines() if not ln.startswith("  .. ")]
    return code, "\n".join(lines)


# ---- the CLI reference ----------------------------------------------------------------------

def cli_reference(build_parser) -> str:
    """The help of the command and of each sub-command, from ``build_parser()``."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        ap = build_parser()
        out = [rst.literal(ap.format_help())]
        subs = [a for a in ap._actions if a.__class__.__name__ == "_SubParsersAction"]
        helps = {c.dest: c.help for s in subs for c in s._choices_actions}
        for s in subs:
            for name, sp in s.choices.items():
                out.append(f".. _cli-{name}:\n\n")
                out.append(rst.title(f"rulebook {name}", "-"))
                if helps.get(name):
                    out.append(rst.esc(helps[name][:1].upper() + helps[name][1:]) + ".\n\n")
                out.append(rst.literal(sp.format_help()))
        return "".join(out)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


# ---- the language reference, from the grammar ---------------------------------------------

@dataclass
class GrammarRule:
    name: str          # the rule as written (without ? or !)
    text: str          # its definition in rules.lark
    comment: str       # the comment lines just above it
    nodes: list        # the tree names it produces (itself and its `-> alias`es)
    example: str = ""
    example_from: str = ""


def grammar_rules(grammar_text: str) -> list[GrammarRule]:
    """Every rule of the Lark grammar, in the file's order, with its definition text."""
    lines = grammar_text.split("\n")
    rules: list[GrammarRule] = []
    comment: list[str] = []
    i = 0
    head = re.compile(r"^([?!]?)([a-z_][a-z_0-9]*)\s*:")
    while i < len(lines):
        ln = lines[i]
        m = head.match(ln)
        if not m:
            comment = comment + [ln[2:].strip()] if ln.startswith("//") else []
            i += 1
            continue
        body = [ln]
        i += 1
        while i < len(lines) and lines[i].startswith((" ", "\t")) and lines[i].strip():
            body.append(lines[i])
            i += 1
        text = "\n".join(body)
        name = m.group(2)
        aliases = re.findall(r"->\s*([a-z_][a-z_0-9]*)", text)
        produced = ([] if m.group(1) == "?" else [name]) + aliases
        rules.append(GrammarRule(name, text, " ".join(c for c in comment if c), produced))
        comment = []
    return rules


def grammar_examples(rules: list[GrammarRule], spec_files: list[Path]) -> None:
    """Fill each rule's example: the shortest of its first occurrences in the real specs."""
    from ..lang.syntax import parse
    wanted: dict[str, list[GrammarRule]] = {}
    for r in rules:
        for n in r.nodes:
            wanted.setdefault(n, []).append(r)  # `-> arith` is both a sum and a product
    best: dict[str, tuple[str, str]] = {}
    for path in spec_files:
        text = path.read_text(encoding="utf-8")
        try:
            tree = parse(text, str(path))
        except RulebookError:
            continue
        for t in tree.iter_subtrees_topdown():
            if t.data not in wanted or t.meta.empty:
                continue
            snippet = text[t.meta.start_pos:t.meta.end_pos]
            if not snippet.strip():
                continue
            # Prefer a short, one-line example; among those, the first found.
            score = (snippet.count("\n") > 0, len(snippet) > 100)
            for r in wanted[t.data]:
                old = best.get(r.name)
                if old is None or score < old[2]:
                    best[r.name] = (snippet, path.name, score)
    for r in rules:
        if r.name in best:
            snippet, where, _ = best[r.name]
            if snippet.count("\n") > 12:
                snippet = "\n".join(snippet.split("\n")[:12]) + "\n..."
            r.example, r.example_from = snippet, where


def grammar_reference(grammar_path: Path, spec_files: list[Path]) -> str:
    text = grammar_path.read_text(encoding="utf-8")
    rules = grammar_rules(text)
    grammar_examples(rules, spec_files)
    out = ["Every rule of :file:`grammar/rules.lark`, in the grammar's order, with its Lark "
           "definition and, where the specs use it, the shortest example found in "
           + ", ".join(f":file:`spec/{p.name}`" for p in spec_files)
           + " (found by parsing them while these docs were built). A rule written "
           "``?name`` is inlined into its parent unless it has an alias (``-> alias``).\n\n"]
    section = "Declarations"
    out.append(rst.title(section, "-"))
    for r in rules:
        new = {"block": "Statements", "type": "Types", "expr": "Expressions"}.get(r.name)
        if new:
            out.append(rst.title(new, "-"))
        out.append(f".. _grammar-{r.name}:\n\n")
        out.append(f".. rubric:: {r.name}\n\n")
        if r.comment:
            out.append(rst.esc(r.comment) + "\n\n")
        out.append(rst.code(r.text, "text"))
        if r.example:
            out.append(f"Example (from :file:`spec/{r.example_from}`):\n\n")
            out.append(rst.code(r.example))
        elif not r.nodes:
            out.append("*Inlined:* it leaves no node of its own; see its alternatives.\n\n")
        else:
            out.append("*No spec uses this construct yet.*\n\n")
    terms = re.findall(r"^([A-Z_]+)\s*:(.*)$", text, re.M)
    out.append(rst.title("Tokens", "-"))
    out.append(rst.table(["token", "definition"],
                      [[f"``{n}``", rst.inline_code(d.strip())] for n, d in terms], "20 80"))
    return "".join(out)


# ---- the cookbook ---------------------------------------------------------------------------

def _owner(puzzle: dict) -> str | None:
    """The game page a puzzle belongs to: its last expansion variant, else its game."""
    vs = puzzle.get("variants") or []
    ext = [v for v in vs if isinstance(v, str) and ":" not in v]
    return ext[-1] if ext else puzzle.get("game")


def puzzle_files(root: Path, game: str) -> list[Path]:
    out = []
    for p in sorted((root / "examples" / "puzzles").glob("*.json")):
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        items = data if isinstance(data, list) else [data]
        if any(isinstance(o, dict) and _owner(o) == game for o in items):
            out.append(p)
    return out


def cookbook(root: Path, games: list[str], main) -> Page:
    """Per game: its puzzles and worked examples, as the real commands (run through the entry
    point ``main``) and their outputs."""
    page = Page("")
    out = []
    for name in games:
        from .docpages import page_game
        g = page_game(name)
        out.append(rst.title(g.p.title, "-"))
        out.append(f"Game page: {rst.ref('game', name, g.p.title)}.\n\n")
        files = puzzle_files(root, name)
        if not files:
            out.append("*No puzzle files in* :file:`examples/puzzles/` *for this game yet.*"
                       "\n\n")
        for p in files:
            rel = p.relative_to(root)
            page.depends.add(str(p.resolve()))
            out.append(rst.title(f"Puzzle {p.stem}", "~"))
            out.append(f"The input, :file:`{rel}`:\n\n")
            out.append(rst.code(p.read_text(encoding="utf-8"), "json"))
            answers = []
            for argv in (["solve", str(rel)], ["solve", str(rel), "--backend", "z3"]):
                code, text = run_cli(main, argv, root)
                if code != 0:
                    page.warnings.append(f"rulebook {' '.join(argv)} exited with {code}: "
                                         f"{text.splitlines()[-1] if text else ''}")
                out.append(rst.code(f"$ rulebook {' '.join(argv)}\n{text}", "console"))
                try:
                    answers.append(json.loads(text))
                except json.JSONDecodeError:
                    answers.append(None)
            # Witnesses may differ (any solution will do); the answers themselves may not.
            strip = lambda a: {k: v for k, v in a.items() if k != "steps"} \
                if isinstance(a, dict) else a  # noqa: E731
            if len(answers) == 2 and strip(answers[0]) != strip(answers[1]):
                page.warnings.append(f"{rel}: the search and z3 backends disagree: "
                                     f"{answers[0]} vs {answers[1]}")
            else:
                out.append("Both backends give the same answer (their steps may differ: any "
                           "solution will do).\n\n")
        out.append(rst.title("Checking the book's examples", "~"))
        code, text = run_cli(main, ["examples", name], root)
        out.append(rst.code(f"$ rulebook examples {name}\n{text}", "console"))
        out.append(rst.title("The legal moves of the initial state", "~"))
        code, text = run_cli(main, ["moves", name, "--all"], root)
        lines = text.splitlines()
        if len(lines) > 40:
            text = "\n".join(lines[:40]) + f"\n... ({len(lines) - 40} more lines)"
        out.append(rst.code(f"$ rulebook moves {name} --all\n{text}", "console"))
    page.text = "".join(out)
    return page
