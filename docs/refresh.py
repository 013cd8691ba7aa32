"""Refresh the stored slow results that the documentation shows: ambiguity witnesses and proofs.

Finding a smallest witness for each reading and proving the invariants each take minutes, too
slow for every docs build.  This script runs them and stores the answers as JSON:

    docs/witnesses/<game>.json   `rulebook ambiguities GAME --json`, plus when and how
    docs/proofs/<game>.json      `rulebook prove GAME --depth K --json`, plus when and how

The docs build replays every stored witness in the interpreter under both readings and fails
(a Sphinx warning, an error under -W) when one no longer shows a disagreement; proof results
are shown with their date and depth, never re-proved at build time.

    python docs/refresh.py                    # every game in spec/, witnesses and proofs
    python docs/refresh.py les-5-tours --only witnesses
    python docs/refresh.py --depth 3          # deeper bounded model checking
    python docs/refresh.py torres --only witnesses --param w=4 --param h=3   # a smaller board
    python docs/refresh.py torres --only witnesses --param w=4 --param h=2 --present w=8 \
        --present h=8     # searched on 4 x 2 squares, shown (and replayed) on the 8 x 8 board
    python docs/refresh.py --restamp          # add the program digests to current results
    python docs/refresh.py torres --seed-only # add the store's seed to the stored proofs

Proofs use the proof store (`rulebook prove`'s, ``--store``/``--no-store``): a re-proof after
an edit of one action checks that action's paths only.  The store is first seeded from the
``store_seed`` of the stored proofs, and each proof written carries the seed of what it
proved (`solver.prover.seed`), so that a fresh clone re-proves incrementally too.

Witnesses are searched with the parameters they were stored with (a Torres board of 4 x 3
squares, say) unless --param says otherwise.
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from solver.queries import embed  # noqa: E402
from solver.lang.digest import (current, proof_digest, proof_ir_digest, rules_digest,  # noqa: E402
                                rules_ir_digest, spec_digest)
from solver.engine.game import load_game  # noqa: E402
from solver.lang.errors import RulebookError  # noqa: E402
from solver.prover.options import ProveOptions  # noqa: E402
from solver.prover.prove import prove  # noqa: E402
from solver.prover.result import Tally  # noqa: E402
from solver.prover import seed as seeding  # noqa: E402
from solver.prover import tactics  # noqa: E402
from solver.prover.store import Store, default_path  # noqa: E402
from solver.queries.readings import find_ambiguities  # noqa: E402
from solver.lang.resources import spec_dir  # noqa: E402
from solver.cli.parser import picks_tactics  # noqa: E402


def spec_games() -> list[str]:
    """Every spec (an expansion is loaded with its base, as on its docs page)."""
    return sorted(p.stem for p in spec_dir().glob("*.rules"))


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _write(path: Path, obj: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    at = text.find('\n "store_seed": ')
    if at >= 0:
        # The seed's path counts one action a line, not one number a line (and an
        # abstraction of the step, three flags, one a line).
        text = text[:at] + re.sub(r"\[\s*((?:-?\d+|null|true|false)(?:,\s*(?:-?\d+|null|"
                                  r"true|false))*)\s*\]",
                                  lambda m: "[" + ", ".join(re.split(r",\s*", m.group(1)))
                                  + "]", text[at:])
        # ... and an action's rung one a line
        text = re.sub(r'\{\s*"digest": ("\w+"),\s*"under": \[\s*((?:\[[^\[\]]*\],?\s*)+)\]\s*\}',
                      lambda m: '{"digest": %s, "under": [%s]}' % (
                          m.group(1), ", ".join(re.findall(r"\[[^\[\]]*\]", m.group(2)))),
                      text)
    path.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(HERE.parent)}", file=sys.stderr)


def _stored_params(path: Path) -> dict:
    """The parameters a stored result was computed with (a smaller board, say), reused."""
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")).get("params", {}))
    except (OSError, ValueError):
        return {}


def _param_flags(game: str, params: dict) -> str:
    """The command-line flags that set ``params`` where they differ from the defaults."""
    dflt = load_game(game).p.param_values
    return "".join(f" --param {k}={v}" for k, v in sorted(params.items()) if dflt.get(k) != v)


def _variant_flags(variants) -> str:
    return "".join(f" --variant {v}" for v in variants)


def stored_game(stored: dict):
    """The game a stored result was made from: its parameters and readings (``variants``)."""
    return load_game(stored["game"], tuple(stored.get("variants", ())),
                     tuple(sorted(stored.get("params", {}).items())))


def _stored_present(path: Path) -> dict:
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")).get("present", {}))
    except (OSError, ValueError):
        return {}


def refresh_witnesses(game: str, timeout_s: float, params: dict | None = None,
                      reading: str | None = None, present: dict | None = None,
                      invariants: bool = False) -> None:
    """Store the witnesses of every reading, or only of ``reading`` (the others are kept as
    stored: the docs build replays each of them against the current spec).  They are searched
    with ``params`` (a small board, say); with ``present``, each is shown under those
    parameters instead (the game's own board), replayed there."""
    path = HERE / "witnesses" / f"{game}.json"
    params = params if params else _stored_params(path)
    present = present if present else _stored_present(path)
    g = load_game(game, (), tuple(sorted(params.items())))
    t0 = time.perf_counter()
    res = find_ambiguities(g, reading, int(timeout_s * 1000),
                           lambda m: print(f"  .. {game}: {m}", file=sys.stderr, flush=True),
                           invariants)
    shown = [r.as_json() for r in res]
    if present:
        small = dict(g.p.param_values)
        big = {**small, **present}
        moved = [embed.present(game, r, small, big, keep=True) for r in res]
        shown = [{**r.as_json(), **({"searched_on": r.searched_on or small} if r.found else {})}
                 for r in moved]
    command = f"rulebook ambiguities {game}{_param_flags(game, params)}" \
              f"{' --invariants' if invariants else ''} --json"
    if reading is not None:
        old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        kept = [w for w in old.get("ambiguities", []) if w.get("reading") != reading]
        order = [r.name for r in g.p.readings]
        shown = sorted(kept + shown, key=lambda w: order.index(w["reading"])
                       if w.get("reading") in order else len(order))
        command = f"{command} (reading {reading} refreshed alone; the others as of " \
                  f"{old.get('generated', '?')})"
    _write(path, {
        "game": game, "generated": _now(), "seconds": round(time.perf_counter() - t0, 1),
        "command": command,
        "spec_sha256": spec_digest(g),
        # Witnesses depend on the rules alone: they stay current when only an invariant,
        # example or puzzle changes (docpages checks either digest).
        "rules_sha256": rules_digest(g),
        # ... and by the checked rules under each reading's options: a doc string, a layout or
        # a local's name changes nothing.
        "rules_ir_sha256": rules_ir_digest(g),
        "params": dict(g.p.param_values),
        **({"present": present} if present else {}),
        "ambiguities": shown})


def refresh_proofs(game: str, depth: int, timeout_s: float, step_timeout_s: float = 5.0,
                   split_lengths: bool = False, params: dict | None = None,
                   split_on: tuple[str, ...] = (), jobs: int = 1,
                   journal: str | None = None, opaque_fix: bool = False,
                   store_as: str | None = None, only: tuple[str, ...] = (),
                   alone: bool = False, region_facts: bool = False,
                   symmetric: bool = False, store: str | None = "",
                   auto: bool = False, variants: tuple[str, ...] = ()) -> None:
    """Store the proofs of the invariants, under ``params`` (a small board, say; by default
    the parameters of the stored proofs are reused): a proof holds for those parameters.
    ``store_as``: the file's name instead of the game's (a second proof of the game, under
    other parameters; the docs show the game's own).  ``only`` and ``alone``: `rulebook
    prove --invariant NAME --alone` (the others are then stored as not proved).  ``store``:
    the proof store ("": the user's, as `rulebook prove`; None: none), seeded first from the
    stored proofs' seeds; the proof written carries its own (``store_seed``).  ``auto``: the
    prover picks its tactics (`rulebook prove` with no tactic flag; the tactic arguments are
    then not used).  ``variants``: readings READING:OPTION the proof is made under instead
    of the spec's defaults (stored as ``variants``: a proof of that reading only)."""
    path = HERE / "proofs" / f"{store_as or game}.json"
    params = params if params else _stored_params(path)
    g = load_game(game, variants, tuple(sorted(params.items())))
    t0 = time.perf_counter()
    if store == "" and journal is None:
        store = str(default_path())
    options = ProveOptions(
        bmc_depth=depth, timeout_ms=int(timeout_s * 1000), only=only or None,
        step_timeout_ms=int(step_timeout_s * 1000), split_lengths=split_lengths,
        split_on=split_on, journal=journal, opaque_fix=opaque_fix, alone=alone,
        region_facts=region_facts, symmetric=symmetric, auto=auto and journal is None,
        store=store if journal is None else None)
    tally = Tally()
    # --jobs N: the Dask workers of `rulebook prove --workers N` (cluster.py).
    from solver.prover import cluster
    engine = cluster.engine(cluster.Recipe.of(game, variants, tuple(sorted(params.items()))),
                            jobs) if jobs > 1 else None
    try:
        res = prove(g, options, lambda m: print(f"  .. {game}: {m}", file=sys.stderr,
                                                flush=True), tally, stored_seeds(game), engine)
    finally:
        if engine is not None:
            engine.close()
    seed = None
    if options.store is not None:
        under = _seeded_under(g, options, game)
        quiet = Store(options.store, g, under, lambda *a, **k: None)    # said above
        seed = seeding.seed_of(quiet, g, under, tally.inductive, tally.inductive,
                               tally.transitions)
    print(f"  .. {game}: paths: {tally.paths} in all, {tally.reused} reused from the store, "
          f"{tally.checked} checked", file=sys.stderr)
    step = f" --step-timeout {step_timeout_s:g}" if step_timeout_s != 5.0 else ""
    step += " --split-lengths" if split_lengths else ""
    step += "".join(f" --split-on {f}" for f in split_on)
    step += " --opaque-fix" if opaque_fix else ""
    step += " --region-facts" if region_facts else ""
    step += " --symmetry" if symmetric else ""
    step = "" if options.auto else step
    step += "".join(f" --invariant {n}" for n in only) + (" --alone" if alone else "")
    _write(path, {
        "game": game, "generated": _now(), "seconds": round(time.perf_counter() - t0, 1),
        "command": f"rulebook prove {game}{_variant_flags(variants)}"
                   f"{_param_flags(game, params)} --depth {depth}{step} --json", "depth": depth,
        **({"variants": list(variants)} if variants else {}),
        "spec_sha256": spec_digest(g),
        # A proof depends on the rules and the invariants: it stays current when only an
        # example or a puzzle changes (docpages checks either digest).  Proved alone, it
        # depends on the named invariants only: another one may be added.
        "proof_sha256": proof_digest(g, only if alone else None),
        # ... and by the checked program it read (the IR, not the text): a doc string, a
        # layout, a local's name or a reading lowered to the same rules leaves it current.
        "proof_ir_sha256": proof_ir_digest(g, only if alone else None),
        **({"proof_invariants": sorted(only)} if alone else {}),
        # What this run checked: a re-proof from the store checks only what an edit reached.
        "paths": {"total": tally.paths, "reused": tally.reused, "checked": tally.checked},
        "params": dict(g.p.param_values),
        "results": [r.as_json() for r in res],
        **({"store_seed": seed} if seed and seeding.seed_paths(seed) else {})})


def stored_seeds(game: str) -> list[tuple[str, dict]]:
    """The ``store_seed`` of each stored proof of ``game``: (path, seed)."""
    out = []
    for path in sorted((HERE / "proofs").glob("*.json")):
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if stored.get("game") == game and isinstance(stored.get("store_seed"), dict):
            out.append((str(path.relative_to(HERE.parent)), stored["store_seed"]))
    return out


def _seeded_under(g, options: ProveOptions, game: str) -> ProveOptions:
    """The options whose store context a proof's seed is read under: with the prover's own
    tactics, its first pass's (the case split on the pinned fields is the ladder's, not the
    caller's: Towers' 16 cases, one a block; or that of the stored proof of ``game`` it was
    re-made from, `seed.split_of`)."""
    if not options.auto:
        return options
    split = seeding.split_of(g, options, stored_seeds(game))
    return tactics.ladder(g, options, split=split)[0][1]


def _stored_options(stored: dict, store: str) -> ProveOptions:
    """The options of a stored proof's run, read from its command."""
    from solver.cli.parser import build_parser
    args = build_parser().parse_args(stored["command"].split()[1:])
    auto = picks_tactics(args)
    return ProveOptions(
        bmc_depth=args.depth, only=tuple(args.invariant) if args.invariant else None,
        auto=auto, step_timeout_ms=int((args.step_timeout or 5.0) * 1000),
        split_lengths=args.split_lengths,
        exact_reals=args.exact_reals, split_on=tuple(args.split_on),
        opaque_fix=args.opaque_fix, alone=args.alone, region_facts=args.region_facts,
        symmetric=args.symmetry, store=store)


def seed_stored(games: list[str], store: str) -> int:
    """Add to each stored proof of ``games`` (all when empty) that is current the seed of
    what the proof ``store`` holds for it (`seed.seed_of`), changing nothing else; a proof
    whose paths the store does not hold is named and left alone.  The number left alone."""
    left = 0
    for path in sorted((HERE / "proofs").glob("*.json")):
        stored = json.loads(path.read_text(encoding="utf-8"))
        name = path.relative_to(HERE.parent)
        if games and stored.get("game") not in games:
            continue
        g = stored_game(stored)
        options = _stored_options(stored, store)
        if not current(g, stored) or (options.only and not options.alone):
            print(f"{name}: stale (or proved beside unnamed auxiliaries): no seed",
                  file=sys.stderr)
            left += 1
            continue
        states = {i.name for i in g.p.invariants if not i.transition}
        ok = [r["invariant"] for r in stored["results"] if r["status"] == "inductive"]
        options = _seeded_under(g, options, stored["game"])
        held = Store(store, g, options, print)
        if stored.get("store_seed"):       # what the proof carries counts as held too
            seeding.plant(held, stored["store_seed"])
        seed = seeding.seed_of(held, g, options,
                               [n for n in ok if n in states], [n for n in ok if n in states],
                               [n for n in ok if n not in states])
        n = seeding.seed_paths(seed)
        if not n:
            print(f"{name}: the store holds none of its paths: no seed", file=sys.stderr)
            left += 1
            continue
        gaps = sum(c is None for table in ("groups", "transition_groups")
                   for v in seed.get(table, {}).values() for c in v)
        print(f"{name}: seed of {n} paths" + (f" ({gaps} groups unknown to the store)"
                                               if gaps else ""), file=sys.stderr)
        if stored.get("store_seed") != seed:
            _write(path, {**stored, "store_seed": seed})
    return left


def restamp(games: list[str]) -> int:
    """Add the program digests (``proof_ir_sha256``, ``rules_ir_sha256``) to the stored proofs
    and witnesses of ``games`` (all when empty) that are current by their text digests, or, a
    proof, by its program digest as it was made before the actions' slots were named by order
    (`irdigest.SlotCanon`): then its seed's action digests are made anew too (`reseed`).  The
    stale ones are named and left alone.  The number of stale files."""
    stale = 0
    for kind, key, digest in (("proofs", "proof_ir_sha256", proof_ir_digest),
                              ("witnesses", "rules_ir_sha256", rules_ir_digest)):
        for path in sorted((HERE / kind).glob("*.json")):
            stored = json.loads(path.read_text(encoding="utf-8"))
            if games and stored.get("game") not in games:
                continue
            g = stored_game(stored)
            invs = stored.get("proof_invariants")
            old = kind == "proofs" and key in stored \
                and stored[key] == proof_ir_digest(g, invs, legacy=True)
            if not old and not current(g, stored):
                print(f"stale, not re-stamped: {path.relative_to(HERE.parent)}", file=sys.stderr)
                stale += 1
                continue
            if old and isinstance(stored.get("store_seed"), dict):
                stored = {**stored, "store_seed": reseed(g, stored["store_seed"])}
            new = digest(g, invs) if kind == "proofs" else digest(g)
            if stored.get(key) != new:
                # The new field goes after the text digests, the rest in its place.
                out = {}
                for k, v in stored.items():
                    if k != key:
                        out[k] = v
                    if k in ("proof_sha256", "rules_sha256"):
                        out[key] = new
                out.setdefault(key, new)
                _write(path, out)
    return stale


def reseed(game, seed: dict) -> dict:
    """``seed`` with each action digest of ``game`` as it was made before `SlotCanon` replaced
    by today's (the groups, transition groups and shapes are keyed by them); the other keys
    (invariants, context) are made as before."""
    from solver.lang.irdigest import part_digests
    old, new = part_digests(game.p, legacy=True), part_digests(game.p)
    to = {old[k]: new[k] for k in old if k.startswith("action:")}
    return {k: ({to.get(d, d): v for d, v in seed[k].items()}
                if k in ("groups", "transition_groups", "shapes") and isinstance(seed[k], dict)
                else v) for k, v in seed.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*", help="games to refresh (default: every spec)")
    ap.add_argument("--only", choices=["witnesses", "proofs"])
    ap.add_argument("--depth", type=int, default=2, help="bounded model checking depth")
    ap.add_argument("--timeout", type=float, default=300.0, help="z3 time limit per query, s")
    ap.add_argument("--reading", help="refresh the witnesses of this reading only")
    ap.add_argument("--step-timeout", type=float, default=None,
                    help="z3 time limit per query of the inductive step, s (5 with another "
                    "tactic flag; with none, the prover picks its tactics, as rulebook "
                    "prove does)")
    ap.add_argument("--split-lengths", action="store_true",
                    help="prove with rulebook prove --split-lengths")
    ap.add_argument("--split-on", action="append", default=[], metavar="FIELD",
                    help="prove with rulebook prove --split-on FIELD (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, metavar="N",
                    help="check the inductive step on N local Dask workers (rulebook prove "
                    "--workers; default: %(default)s, in this process)")
    ap.add_argument("--journal", metavar="FILE",
                    help="resume the inductive step from FILE (rulebook prove --journal)")
    ap.add_argument("--opaque-fix", action="store_true",
                    help="prove with rulebook prove --opaque-fix")
    ap.add_argument("--region-facts", action="store_true",
                    help="prove with rulebook prove --region-facts")
    ap.add_argument("--symmetry", action="store_true",
                    help="prove with rulebook prove --symmetry")
    ap.add_argument("--store-as", metavar="NAME",
                    help="store the proof as docs/proofs/NAME.json (a second proof of one "
                    "game, under other parameters)")
    ap.add_argument("--invariant", action="append", default=[], metavar="NAME",
                    help="prove and store only this invariant (rulebook prove --invariant)")
    ap.add_argument("--variant", action="append", default=[], metavar="READING:OPTION",
                    help="prove under this option of a reading, not the spec's default "
                    "(rulebook prove --variant; repeatable; proofs only)")
    ap.add_argument("--alone", action="store_true",
                    help="with --invariant: assume none of the others (rulebook prove --alone)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=N",
                    help="search witnesses, or prove, with this game parameter (e.g. a smaller "
                    "board, w=4); by default the parameters of the stored results are reused")
    ap.add_argument("--invariants", action="store_true",
                    help="search witnesses only in states where the spec's invariants hold "
                    "(rulebook ambiguities --invariants)")
    ap.add_argument("--present", action="append", default=[], metavar="NAME=N",
                    help="show the witnesses found under these parameters instead (a witness "
                    "of a small board on the game's board, e.g. w=8), replayed there")
    ap.add_argument("--store", metavar="FILE", default="",
                    help="the proof store (rulebook prove --store; default: the user's cache, "
                    "~/.cache/rulebook/proofs.sqlite)")
    ap.add_argument("--no-store", action="store_true",
                    help="prove with no proof store (rulebook prove --no-store): no seed")
    ap.add_argument("--seed-only", action="store_true",
                    help="prove nothing: add to the stored proofs the seed of what the proof "
                    "store holds for them (exit status 1 if some get none)")
    ap.add_argument("--restamp", action="store_true",
                    help="compute nothing: add the program digests to the stored proofs and "
                    "witnesses that are current today (exit status 1 if some are stale)")
    args = ap.parse_args(argv)
    if args.restamp:
        return 1 if restamp(args.games) else 0
    store = None if args.no_store else args.store
    if args.seed_only:
        return 1 if seed_stored(args.games, store or str(default_path())) else 0
    params = {}
    for it in args.param:
        name, _, val = it.partition("=")
        params[name.strip()] = int(val)
    present = {}
    for it in args.present:
        name, _, val = it.partition("=")
        present[name.strip()] = int(val)
    if args.variant and args.only != "proofs":
        ap.error("--variant: only with --only proofs (the witnesses compare the readings)")
    for game in args.games or spec_games():
        if args.only in (None, "witnesses"):
            refresh_witnesses(game, args.timeout, params, args.reading, present,
                              args.invariants)
        if args.only in (None, "proofs"):
            auto = picks_tactics(args)
            refresh_proofs(game, args.depth, args.timeout,
                           5.0 if args.step_timeout is None else args.step_timeout,
                           args.split_lengths, params, tuple(args.split_on), args.jobs,
                           args.journal, args.opaque_fix, args.store_as,
                           tuple(args.invariant), args.alone, args.region_facts,
                           args.symmetry, store, auto, tuple(args.variant))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RulebookError as e:      # a bad game, parameter or reading: one line, status 2
        print(f"refresh: {e}", file=sys.stderr)
        sys.exit(2)
