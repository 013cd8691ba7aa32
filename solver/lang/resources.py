"""Where the grammar and the specs live: in the repository when run from it, else in the
installed package (they ship as package data, so the installed CLI works anywhere)."""
from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from pathlib import Path

# The checkout this package runs from (its docs/, spec/ and grammar/ sit here when it is one).
REPO = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=None)
def _dir(name: str) -> Path:
    # Decided once: where the package runs from does not change while it runs (and every
    # puzzle's look-up of its spec asks).
    here = REPO / name
    if here.is_dir():
        return here
    return Path(str(resources.files("solver") / name))


def cache_home() -> Path:
    """The folder of this tool's caches (the proof store, the compiled programs):
    ``$XDG_CACHE_HOME/rulebook``, else ``~/.cache/rulebook``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rulebook"


def grammar_path() -> Path:
    return _dir("grammar") / "rules.lark"


def spec_dir() -> Path:
    return _dir("spec")


def rulebook_dir() -> Path | None:
    """The French rulebooks (``../shared/rules``), when this checkout has them beside it."""
    for cand in (REPO.parent / "shared" / "rules", REPO.parent.parent / "shared" / "rules"):
        if cand.is_dir():
            return cand
    return None
