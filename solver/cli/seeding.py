"""`rulebook prove`'s filling of the proof store from what is already proved: a journal
(``--import-journal FILE``) and the seeds of the stored proofs in ``docs/proofs/``."""
from __future__ import annotations

import json
import sys
import time

from ..lang.errors import InputError
from ..lang.resources import REPO


def store_path(args) -> str | None:
    """The proof store `prove` uses: --store's, else the user's cache (its folder made);
    None with --no-store or a journal."""
    from ..prover.store import default_path
    if args.no_store or args.journal:
        if args.store:
            raise InputError("--store: not with " + ("--no-store" if args.no_store
                                                     else "--journal"))
        return None
    if args.store:
        return args.store
    path = default_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{path.parent}: cannot make the proof store's folder "
                         f"({e.strerror}); give --store FILE or --no-store") from None
    return str(path)


def stored_proofs(game: str) -> list[tuple[str, dict]]:
    """The stored proofs of ``game`` in this checkout's ``docs/proofs/``: (path, proof)."""
    folder = REPO / "docs" / "proofs"
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(stored, dict) and stored.get("game") == game:
            out.append((f"docs/proofs/{path.name}", stored))
    return out


def seeds(game: str) -> list[tuple[str, dict]]:
    """The ``store_seed`` of each stored proof of ``game``: (path, seed)."""
    return [(name, p["store_seed"]) for name, p in stored_proofs(game)
            if isinstance(p.get("store_seed"), dict)]


def import_journal(args, game, options, say) -> int:
    """``rulebook prove GAME ... --import-journal FILE``: the journal's verdicts into the
    store, said in one line (JSON with --json); the proof itself is not run."""
    from ..prover.seed import JournalRefused, import_journal as run
    from ..prover.store import Store
    t0 = time.perf_counter()
    if say is not None:
        say.clear()
    store = Store(options.store, game, options,
                  lambda m: print(f"rulebook: {m}", file=sys.stderr))
    try:
        got = run(args.import_journal, game, options, store, stored_proofs(args.game),
                  lambda m: print(f"rulebook: {args.import_journal}: {m}", file=sys.stderr))
    except JournalRefused as e:
        raise InputError(f"{args.import_journal}: not imported: {e}") from None
    took = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"game": game.name, "params": game.p.param_values,
                          "journal": args.import_journal, "store": options.store,
                          "seconds": round(took, 2), **got}))
    else:
        print(f"{args.import_journal}: current ({got['why']})")
        print(f"imported {got['paths']} path verdicts of {got['cases']} cases, "
              f"{got['groups']} groups of the invariants' step and "
              f"{got['transition_groups']} of the transition properties into {options.store} "
              f"({took:.1f} s); the same command without --import-journal proves from them")
    return 0
