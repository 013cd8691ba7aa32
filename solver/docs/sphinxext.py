"""The Sphinx extension of the project: game pages rendered from ``spec/`` at build time.

In ``conf.py``: ``extensions = ["solver.docs.sphinxext"]``.  It provides

* the ``rulebook`` Pygments lexer (also registered as a ``pygments.lexers`` entry point);
* a ``rulebook`` domain: ``.. rulebook:game:: NAME`` renders a whole game page from its spec
  (and makes the page depend on the spec files and stored witnesses/proofs, so editing them
  rebuilds it); roles ``:rulebook:rule:``, ``:rulebook:action:``, ``:rulebook:def:``,
  ``:rulebook:invariant:``, ``:rulebook:reading:``, ``:rulebook:example:``,
  ``:rulebook:game:`` (and the short ``:rule:``), resolved against every game page.  A target is
  ``game.action.rule`` (``les-5-tours.build.decreasing``); any unambiguous dotted suffix works;
* directives ``rulebook-grammar`` (the language reference from the Lark grammar),
  ``rulebook-cli`` (the CLI reference from the argument parser), ``rulebook-cookbook`` (puzzles
  solved by the real commands) and ``rulebook-run`` (a command and its real output);
* the command line documented and run is the module named by ``rulebook_cli`` in ``conf.py``
  (``"solver.cli.main"``: its ``build_parser()`` and ``main(argv)``), imported when a directive
  needs it, so the docs layer never imports the CLI above it;
* a ``builder-inited`` hook that writes one stub page per file in ``spec/`` (``games/NAME.rst``),
  so a new game gets its page without new Python.
"""
from __future__ import annotations

import importlib
import shlex
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.directives import SphinxDirective
from sphinx.domains import Domain, ObjType
from sphinx.roles import XRefRole
from sphinx.util import logging
from sphinx.util.nodes import make_refnode
from sphinx.util.parsing import nested_parse_to_nodes

from . import docpages
from . import docrefs
from .lexer import RulesLexer
from ..lang.resources import grammar_path, spec_dir

logger = logging.getLogger(__name__)

KINDS = ("game", "action", "rule", "def", "invariant", "reading", "example", "puzzle")
REPO = Path(__file__).resolve().parents[2]


def _parse(directive: SphinxDirective, text: str, source: str) -> list[nodes.Node]:
    """Parse generated reST in place of the directive; its section titles become sections of
    the page (the stub page holds nothing else)."""
    lines = StringList(text.split("\n"), source=source)
    return nested_parse_to_nodes(directive.state, lines, allow_section_headings=True)


def _warn_all(directive: SphinxDirective, page: docpages.Page) -> None:
    for w in page.warnings:
        logger.warning(w, location=directive.get_location())


def _depend(directive: SphinxDirective, page: docpages.Page) -> None:
    # The page is also made by the language implementation: a change to it rebuilds the page.
    code = {str(p.resolve()) for p in (REPO / "solver").rglob("*.py")} | {str(grammar_path())}
    for path in sorted(set(page.depends) | code):
        directive.env.note_dependency(path)


# ---- the domain -------------------------------------------------------------------------

class TargetDirective(SphinxDirective):
    """``.. rulebook:target:: KIND FULL.NAME``: an anchor for a rule, action, def..."""

    required_arguments = 2
    has_content = False

    def run(self):
        kind, full = self.arguments
        aid = docpages.anchor(kind, full)
        dom: RulebookDomain = self.env.get_domain("rulebook")
        dom.add_object(kind, full, self.env.docname, aid, self.get_location())
        return [nodes.target("", "", ids=[aid])]


class GameDirective(SphinxDirective):
    """``.. rulebook:game:: NAME``: the whole page of a game, from ``spec/NAME.rules``."""

    required_arguments = 1
    has_content = False

    def run(self):
        name = self.arguments[0]
        conf = self.config
        src = Path(self.env.srcdir)
        try:
            page = docpages.game_page(name, src / conf.rulebook_witness_dir,
                                      src / conf.rulebook_proof_dir)
        except Exception as e:  # a spec error must fail the build with its location
            logger.warning(f"rulebook:game {name}: {e}", location=self.get_location())
            return [nodes.paragraph(text=f"The spec of {name} does not build: {e}")]
        _depend(self, page)
        _warn_all(self, page)
        return _parse(self, page.text, f"<rulebook:game {name}>")


class RulebookDomain(Domain):
    name = "rulebook"
    label = "Rules language"
    object_types = {k: ObjType(k, k) for k in KINDS}
    directives = {"game": GameDirective, "target": TargetDirective}
    roles = {k: XRefRole() for k in KINDS}
    initial_data = {"objects": {}}  # (kind, full name) -> (docname, anchor)
    data_version = 1

    @property
    def objects(self) -> dict:
        return self.data.setdefault("objects", {})

    def add_object(self, kind: str, full: str, docname: str, aid: str, location=None) -> None:
        key = (kind, full)
        if key in self.objects and self.objects[key][0] != docname:
            logger.warning(f"rulebook {kind} {full} is declared twice", location=location)
        self.objects[key] = (docname, aid)

    def clear_doc(self, docname: str) -> None:
        for key, (doc, _) in list(self.objects.items()):
            if doc == docname:
                del self.objects[key]

    def merge_domaindata(self, docnames, otherdata) -> None:
        for key, val in otherdata["objects"].items():
            if val[0] in docnames:
                self.objects[key] = val

    def get_objects(self):
        for (kind, full), (doc, aid) in self.objects.items():
            yield full, full, kind, doc, aid, 1

    def find(self, kind: str, target: str) -> list[tuple[str, tuple[str, str]]]:
        """Exact name first, then any object of this kind whose dotted name ends so."""
        exact = [(full, v) for (k, full), v in self.objects.items() if k == kind and full == target]
        if exact:
            return exact
        return sorted((full, v) for (k, full), v in self.objects.items()
                      if k == kind and full.endswith("." + target))

    def resolve_xref(self, env, fromdocname, builder, typ, target, node, contnode):
        found = self.find(typ, target)
        if not found:
            return None
        if len(found) > 1:
            logger.warning(f"ambiguous :rulebook:{typ}:`{target}`: "
                           f"{', '.join(f for f, _ in found)}", location=node)
        full, (doc, aid) = found[0]
        return make_refnode(builder, fromdocname, doc, aid, contnode, f"{typ} {full}")

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode):
        out = []
        for kind in KINDS:
            found = self.find(kind, target)
            if len(found) == 1:
                full, (doc, aid) = found[0]
                out.append((f"rulebook:{kind}",
                            make_refnode(builder, fromdocname, doc, aid, contnode, full)))
        return out


class ShortRole(XRefRole):
    """``:rule:`build.decreasing``` for ``:rulebook:rule:`build.decreasing```."""

    def __call__(self, name, rawtext, text, lineno, inliner, options=None, content=()):
        return super().__call__("rulebook:" + name, rawtext, text, lineno, inliner,
                                options or {}, content)


# ---- generated references and command outputs ------------------------------------------

def _spec_files() -> list[Path]:
    return sorted(spec_dir().glob("*.rules"))


def spec_games() -> list[str]:
    """Every game of spec/: base games and expansions (an expansion's page shows the game it
    makes with its base, since `load_game` follows `extends`)."""
    return [p.stem for p in _spec_files()]


class GrammarDirective(SphinxDirective):
    """The language reference: every rule of the grammar, with an example from the specs."""

    def run(self):
        self.env.note_dependency(str(grammar_path()))
        for p in _spec_files():
            self.env.note_dependency(str(p))
        text = docrefs.grammar_reference(grammar_path(), _spec_files())
        return _parse(self, text, "<rulebook-grammar>")


def _cli(directive: SphinxDirective):
    """The module of the command line that ``conf.py`` names (``rulebook_cli``)."""
    return importlib.import_module(directive.config.rulebook_cli)


class CliDirective(SphinxDirective):
    """The CLI reference, from the ``build_parser()`` of the ``rulebook_cli`` module."""

    def run(self):
        cli = _cli(self)
        self.env.note_dependency(str(Path(cli.__file__).resolve()))
        return _parse(self, docrefs.cli_reference(cli.build_parser), "<rulebook-cli>")


class CookbookDirective(SphinxDirective):
    """Per game: its puzzle files solved by the real command (both backends), its examples."""

    def run(self):
        page = docrefs.cookbook(REPO, spec_games(), _cli(self).main)
        page.depends.update(str(p.resolve()) for p in _spec_files())
        _depend(self, page)
        _warn_all(self, page)
        return _parse(self, page.text, "<rulebook-cookbook>")


class RunDirective(SphinxDirective):
    """``.. rulebook-run:: ARGS``: run ``rulebook ARGS`` now (in the repository) and show the
    command with its real output.  ``:returncode:`` the expected exit status (default 0: any
    other is a warning); ``:env: NAME=VALUE ...`` extra environment; ``:lines: N`` keep the
    first N lines."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"returncode": directives.nonnegative_int, "env": directives.unchanged,
                   "lines": directives.positive_int}

    def run(self):
        argv = shlex.split(self.arguments[0])
        env = dict(kv.split("=", 1) for kv in shlex.split(self.options.get("env", "")))
        # The output changes with the specs, the files named and the games of RULEBOOK_SPECS.
        deps = list(_spec_files()) + [REPO / a for a in argv if (REPO / a).is_file()]
        for d in env.get("RULEBOOK_SPECS", "").split(":"):
            if d:
                deps += sorted((REPO / d).glob("*.rules"))
        for path in deps:
            self.env.note_dependency(str(path.resolve()))
        code, text = docrefs.run_cli(_cli(self).main, argv, REPO, env)
        want = self.options.get("returncode", 0)
        if code != want:
            logger.warning(f"rulebook {' '.join(argv)} exited with {code}, expected {want}:\n"
                           f"{text}", location=self.get_location())
        n = self.options.get("lines")
        lines = text.splitlines()
        if n and len(lines) > n:
            text = "\n".join(lines[:n]) + f"\n... ({len(lines) - n} more lines)"
        prefix = " ".join(f"{k}={v}" for k, v in env.items())
        shown = f"$ {prefix + ' ' if prefix else ''}rulebook {' '.join(argv)}\n{text}"
        node = nodes.literal_block(shown, shown)
        node["language"] = "console"
        return [node]


# ---- one page per game -------------------------------------------------------------------

STUB = """\
.. Written by solver/docs/sphinxext.py for spec/{name}.rules: do not edit, it is rewritten on
   every build.  The page's content comes from the spec at build time.

.. rulebook:game:: {name}
"""


def write_game_stubs(app) -> None:
    """One ``games/NAME.rst`` per base spec in ``spec/`` (a file is rewritten only when it
    changes, so Sphinx's incremental build keeps working); stubs of removed specs go."""
    out = Path(app.srcdir) / app.config.rulebook_games_dir
    out.mkdir(parents=True, exist_ok=True)
    names = spec_games()
    for name in names:
        path = out / f"{name}.rst"
        text = STUB.format(name=name)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for path in out.glob("*.rst"):
        if path.stem not in names and path.read_text(encoding="utf-8").startswith(".. Written by"):
            path.unlink()


def setup(app):
    app.add_config_value("rulebook_witness_dir", "witnesses", "env")
    app.add_config_value("rulebook_proof_dir", "proofs", "env")
    app.add_config_value("rulebook_games_dir", "games", "env")
    app.add_config_value("rulebook_cli", "solver.cli.main", "env")
    app.add_lexer("rulebook", RulesLexer)
    app.add_lexer("rules", RulesLexer)  # the fences of docs/language.md
    app.add_domain(RulebookDomain)
    for kind in KINDS:
        if kind in ("rule", "action", "invariant", "reading"):
            app.add_role(kind, ShortRole())
    app.add_directive("rulebook-grammar", GrammarDirective)
    app.add_directive("rulebook-cli", CliDirective)
    app.add_directive("rulebook-cookbook", CookbookDirective)
    app.add_directive("rulebook-run", RunDirective)
    app.connect("builder-inited", write_game_stubs)
    return {"version": "0.1", "parallel_read_safe": False, "parallel_write_safe": True,
            "env_version": 1}
