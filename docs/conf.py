"""Sphinx configuration of the rulebook documentation (`make docs`, warnings are errors)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

project = "rulebook"
author = "the rulebook project"
copyright = "2026, the rulebook project"

extensions = ["myst_parser", "solver.docs.sphinxext"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "witnesses", "proofs", "tutorial/*.rules", "tutorial/*.json",
                    "refresh.py"]

# Game pages: one stub per spec, written by solver.docs.sphinxext at builder-inited.
rulebook_games_dir = "games"
rulebook_witness_dir = "witnesses"
rulebook_proof_dir = "proofs"
# The command line the CLI reference, the cookbook and `rulebook-run` document and run: a module
# with `build_parser()` and `main(argv)`, imported by the extension (as sphinx-argparse does).
rulebook_cli = "solver.cli.main"

highlight_language = "none"
pygments_style = "friendly"
html_theme = "alabaster"
html_title = "rulebook"
html_static_path = ["_static"]
html_css_files = ["rulebook.css"]
html_theme_options = {"page_width": "1200px", "sidebar_width": "230px"}
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]
