"""Filling the proof store from what is already proved: a journal's verdicts (`import_journal`,
``rulebook prove ... --import-journal FILE``) and the compact seed a stored proof carries
(`seed_of`, written by docs/refresh.py into ``docs/proofs/NAME.json`` as ``store_seed``;
`plant`, which `prove` calls with the seeds of the stored proofs of its game).

A journal names its paths by their place among all the paths of their case; the store by
their action's digest and their place among that action's paths (`store.Store`).  The
paths of a case come each action's together, in the game's order, so a case whose every
path the journal recorded (its ``"kind": "case"`` record gives how many) tells each
action's first path and count: that is the layout the import reads.

A seed holds, for the final Houdini round (the candidates that survived) and the
transition properties' pass, how many paths each action has in each case where every one
held, keyed by the digests the store's keys are made of: the paths' rows follow (held,
``"by": "seed"``), written only where the store has none.  It also holds each action's
shape (`irshape`): a clone whose rules ask more of an action than the proved version did
finds that version's groups planted, and reuses them (`Store.weaker`); and, by the action's
name, the abstractions of the step its groups held under (``rungs``): a re-proof of an
edited version of it starts the tactics' ladder there (`hints`, `tactics.first_rung`)."""
from __future__ import annotations

import json
from dataclasses import replace

from ..engine.game import Game
from ..lang.digest import proof_digest, proof_ir_digest
from ..lang.errors import RulebookError
from ..lang.irdigest import part_digests
from . import splits, tactics
from .journal import run_key
from .options import ProveOptions
from .store import Store, context, unders

SEED_FORMAT = "1"
# The fields of a journal's run key that are tactics, not the query: a verdict of another
# time-out or length splitting is kept with the tactic it was found under (`Store._usable`).
TACTIC = ("step_timeout_ms", "split_lengths")


class JournalRefused(RulebookError):
    """A journal that is not of this run: nothing imported."""


def state_invariants(game: Game, options: ProveOptions) -> list:
    """The candidates of the inductive step's first round (as `prove` gives them)."""
    only = options.only
    invs = [i for i in game.p.invariants if only is None or i.name in only]
    return [i for i in (invs if options.alone else game.p.invariants) if not i.transition]


def current_journal(head: dict, game: Game, options: ProveOptions, proofs) -> str:
    """Why the journal whose first line is ``head`` is of this run (``game`` under
    ``options``): one line to say.  ``proofs``: (name, stored proof) pairs of this game's
    stored proofs in ``docs/proofs/`` (named as the command names the game: an expansion by
    its own name), for a journal of another spec text.  `JournalRefused`, saying why,
    when it is not."""
    mine = json.loads(json.dumps(run_key(game, options, state_invariants(game, options))))
    if not isinstance(head, dict):
        raise JournalRefused("its first line is no journal's (no run key)")
    differ = sorted(k for k in set(mine) | set(head)
                    if k not in TACTIC and k != "spec" and mine.get(k) != head.get(k))
    if differ:
        said = "; ".join(f"{k} {_short(k, head.get(k))}, this run's {_short(k, mine.get(k))}"
                         for k in differ)
        raise JournalRefused(f"of another run: {said}")
    if head.get("spec") == mine["spec"]:
        return "its run key is this run's"
    ir = proof_ir_digest(game)
    for name, stored in proofs:
        # A journal's run key names the text by its proof digest; one written before the run
        # key did, by the whole spec's (the stored proof's ``spec_sha256`` of that text).
        if head["spec"] in (stored.get("proof_sha256"), stored.get("spec_sha256")) \
                and dict(stored.get("params") or {}) == game.p.param_values \
                and not stored.get("proof_invariants") and stored.get("proof_ir_sha256") == ir:
            return (f"its spec text ({head['spec']}) is that of the stored proof {name}, "
                    f"whose checked program is today's")
    raise JournalRefused(f"of another spec text ({head.get('spec')}, today's "
                         f"{proof_digest(game)}), and no stored proof of that text has "
                         f"today's checked program under these parameters")


def _short(key: str, v) -> str:
    if key in ("params", "readings") and isinstance(v, list) \
            and all(isinstance(x, list) and len(x) == 2 for x in v):
        return " ".join(f"{a}={b}" for a, b in v) or "none"
    return json.dumps(v)


def read_journal(path) -> tuple[dict | None, list[dict]]:
    """A journal's run key (None when its first line is none) and its records."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise RulebookError(f"{path}: cannot read the journal ({e.strerror})") from None
    out = []
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue        # a line cut short by a kill
        if isinstance(obj, dict):
            out.append(obj)
    if not out or not isinstance(out[0].get("journal"), dict):
        return None, out
    return out[0]["journal"], out[1:]


def _layouts(records: list[dict], say) -> dict[int, tuple[dict, dict]]:
    """Per case, each path's (action, place among the action's paths) by its place in the
    case, and the actions whose number of paths there is known (0 for those of no path when
    the whole case is recorded); a case whose records do not make one layout is left out."""
    at_of: dict[int, dict[int, str]] = {}
    total: dict[int, int] = {}
    bad: set[int] = set()
    for r in records:
        ci = r.get("case")
        if not isinstance(ci, int):
            continue
        if r.get("kind") in ("case", "transition-case"):
            if isinstance(r.get("paths"), int):
                total[ci] = max(total.get(ci, 0), r["paths"])
            continue
        at, a = r.get("path"), r.get("action")
        if not isinstance(at, int) or not isinstance(a, str):
            continue
        seen = at_of.setdefault(ci, {})
        if seen.setdefault(at, a) != a:
            bad.add(ci)
    out = {}
    for ci, seen in sorted(at_of.items()):
        span: dict[str, list] = {}
        for at, a in seen.items():
            span.setdefault(a, []).append(at)
        if ci in bad or any(max(v) - min(v) + 1 != len(v) for v in span.values()) \
                or set(seen) != set(range(max(seen) + 1)):
            say(f"case {ci + 1}: the journal's paths do not show each action's place (some "
                f"are missing): not imported")
            continue
        place = {at: (a, at - min(span[a])) for at, a in seen.items()}
        last = seen[max(seen)]
        whole = total.get(ci) == len(seen)
        counts = {a: len(v) for a, v in span.items() if whole or a != last}
        out[ci] = (place, counts, whole)
    return out


def import_journal(path, game: Game, options: ProveOptions, store: Store, proofs,
                   say) -> dict:
    """Write into ``store`` every verdict of the journal ``path`` of this run (`current
    journal`), then the group rows of every action and case whose paths are all there.
    Returns what was done: {"why": the rule that made it current, "paths": path rows,
    "groups": group rows, "transition_groups": ...}; `JournalRefused` when it is of another
    run."""
    head, records = read_journal(path)
    if head is None:
        raise JournalRefused("its first line is no journal's run key")
    why = current_journal(head, game, options, proofs)
    tactic = {k: head.get(k) for k in TACTIC}
    layouts = _layouts(records, say)
    actions = [a.name for a in game.p.actions]
    digest = {a: store.digest(f"action:{a}") for a in actions}
    rows: dict[str, tuple] = {}
    rounds: dict[tuple, None] = {}          # (case, candidates) of the Houdini rounds
    passes: dict[tuple, set] = {}           # (case, assumed) -> the properties checked
    for r in records:
        ci = r.get("case")
        kind = r.get("kind", "step")
        if ci not in layouts or kind not in ("step", "transition"):
            continue
        place = layouts[ci][0].get(r.get("path"))
        if place is None or place[0] != r.get("action") or place[0] not in digest:
            continue
        a, k = digest[place[0]], place[1]
        by = {"by": r["by"]} if r.get("by") else {}
        if kind == "step":
            cand = r.get("candidates") or []
            rounds[(ci, tuple(cand))] = None
            rows[store.step_key(ci, a, k, store.names(cand))] = (
                "step", {"fell": r.get("fell") or {}, "skipped": sorted(r.get("skipped") or ()),
                         "tactic": tactic, **by}, r.get("seconds"))
        else:
            assumed = r.get("assumed") or []
            verdicts = r.get("verdicts") or {}
            passes.setdefault((ci, tuple(assumed)), set()).update(verdicts)
            names = store.names(assumed)
            for p, v in verdicts.items():
                d = store.digest(f"invariant:{p}")
                if d is not None:
                    rows[store.transition_key(ci, a, k, names, d)] = (
                        "transition", {"verdict": v, "tactic": tactic, **by}, None)
    store.put_many([(key, kind, v, s) for key, (kind, v, s) in rows.items()])
    groups = tgroups = 0
    for (ci, cand) in rounds:
        groups += store.record_groups(ci, _built(layouts[ci], actions), list(cand))
    for (ci, assumed), props in passes.items():
        props = sorted(p for p in props if store.digest(f"invariant:{p}") is not None)
        tgroups += store.record_transition_groups(ci, _built(layouts[ci], actions),
                                                  list(assumed), props)
    return {"why": why, "paths": len(rows), "groups": groups, "transition_groups": tgroups,
            "cases": len(layouts)}


def _built(layout: tuple, actions: list[str]) -> dict[str, int]:
    _, counts, whole = layout
    return {a: counts.get(a, 0) for a in actions if whole or a in counts}


# ---- the seed of a stored proof --------------------------------------------------------------

def seed_of(store: Store, game: Game, options: ProveOptions, candidates, assumed,
            properties) -> dict:
    """The seed of the proof ``store`` holds for ``game`` under ``options``: the final
    Houdini round's ``candidates`` (the invariants proved inductive) and the transition
    ``properties`` proved from ``assumed``; per action digest, its number of paths in each
    case where every one held (None where the store does not say)."""
    n = splits.case_count(game, options.split_on)
    actions = [a.name for a in game.p.actions]
    groups = {store.digest(f"action:{a}"): [None] * n for a in actions}
    tgroups = {d: [None] * n for d in groups} if properties else {}
    for ci in range(n):
        if candidates:
            for a, c in store.held_groups(ci, actions, candidates).items():
                groups[store.digest(f"action:{a}")][ci] = c
        if properties:
            for a, c in store.transition_held_groups(ci, actions, assumed,
                                                     properties).items():
                tgroups[store.digest(f"action:{a}")][ci] = c
    rungs = {a: {"digest": store.digest(f"action:{a}"), "under": u}
             for a, u in store.rungs(n, candidates).items()} if candidates else {}
    return {"format": SEED_FORMAT, "context": store.context, "cases": n,
            "candidates": store.names(candidates),
            "groups": groups if candidates else {},
            "shapes": store.shapes(),
            **({"rungs": rungs} if rungs else {}),
            **({"transitions": {"assumed": store.names(assumed),
                                "properties": store.names(properties)},
                "transition_groups": tgroups} if properties else {})}


def seed_paths(seed: dict) -> int:
    """How many path verdicts ``seed`` stands for."""
    per = len(seed.get("transitions", {}).get("properties", ()))
    return sum(c or 0 for v in seed.get("groups", {}).values() for c in v) + per * sum(
        c or 0 for v in seed.get("transition_groups", {}).values() for c in v)


def plant(store: Store, seed: dict) -> tuple[int, str | None]:
    """Write into ``store`` the group rows of ``seed`` and the held verdicts of their paths,
    where the store has no group row yet, for the actions whose digest is in this run's
    program: (the number of groups written, None) or (0, why the seed is not this run's).
    Each group also gets the row saying that every path held under some abstraction of the
    step (`Store.anywhere_keys`), which every pass of the ladder reads; a seed of this run
    under another abstraction (`Store.other_tactic`) gives only that.  The seed's ``rungs``
    are kept by action digest (`Store.put_rungs`), for the seed made after a re-proof."""
    why = _refused(store, seed)
    if why is not None:
        return 0, why
    anywhere = store.other_tactic(seed.get("context"))
    # The abstraction each action was proved under: the seed's, or, a seed made under an
    # abstraction of the step, that one for all.
    rungs = {r["digest"]: unders(r.get("under")) for r in _rungs(seed).values()}
    if anywhere:
        rungs = {d: [store.under_of(seed["context"])]
                 for d in {*(seed.get("groups") or {}), *(seed.get("transition_groups") or {})}}
    store.put_rungs({d: u for d, u in rungs.items() if u})
    # The shapes of the seed's actions first: a version that one of this run's actions
    # strengthens is planted too, and stands for it (`Store.weaker`).
    shapes = seed.get("shapes")
    store.put_shapes(shapes if isinstance(shapes, dict) else {})
    ours = {store.digest(f"action:{a}") for a in store.actions} | \
        {d for a in store.actions for d in store.weaker(a)}
    cand = list(seed.get("candidates") or [])
    tr = seed.get("transitions") or {}
    assumed, props = list(tr.get("assumed") or []), list(tr.get("properties") or [])
    want = []       # (group keys, kind, path rows)
    for kind, table in (("step", seed.get("groups") or {}),
                        ("transition", seed.get("transition_groups") or {})):
        for a, counts in table.items():
            if a not in ours or not isinstance(counts, list):
                continue
            for ci, c in enumerate(counts):
                if not isinstance(c, int) or c < 0:
                    continue
                # Held under some abstraction of the step, so under every one: one row a
                # group, which every pass of the ladder reads.
                g = [(k, "anywhere")
                     for k in store.anywhere_keys(kind, ci, a, cand, assumed, props)]
                if anywhere:    # and no more where it was held under another
                    want.append((g, c, []))
                    continue
                if kind == "step":
                    g += [(store.group_key(ci, a, cand), "group")]
                    ps = [(store.step_key(ci, a, k, cand), "step",
                           {"fell": {}, "skipped": [], "by": "seed"}) for k in range(c)]
                else:
                    g += [(store.transition_group_key(ci, a, assumed, p), "transition-group")
                          for p in props]
                    ps = [(store.transition_key(ci, a, k, assumed, p), "transition",
                           {"verdict": None, "by": "seed"}) for k in range(c) for p in props]
                want.append((g, c, ps))
    have = store.get([k for g, _, _ in want for k, _ in g])
    rows = []
    planted = 0
    for g, c, ps in want:
        if all(k in have for k, _ in g):
            continue
        planted += 1
        rows.extend((k, kind, v, None) for k, kind, v in ps)
        rows.extend((k, kind, {"paths": c}, None) for k, kind in g)
    store.put_many(rows, replace=False)
    return planted, None


def _refused(store: Store, seed) -> str | None:
    """Why ``seed`` is not of this run (`plant`), or None."""
    if not isinstance(seed, dict) or seed.get("format") != SEED_FORMAT:
        return "a seed of another format"
    if seed.get("context") not in store.contexts and not store.other_tactic(seed.get("context")):
        return "of another context (parameters, options, state or z3 version)"
    return None


def _rungs(seed: dict) -> dict[str, dict]:
    """A seed's ``rungs``, well formed: action name -> {"digest", "under"}."""
    got = seed.get("rungs")
    return {a: r for a, r in got.items() if isinstance(r, dict)
            and isinstance(r.get("digest"), str)} if isinstance(got, dict) else {}


def hints(store: Store, seeds) -> dict[str, list]:
    """Per action name, the abstractions of the step (`options.under`) under which the stored
    proofs of this run (``seeds``: (name, seed) pairs, those `plant` takes) proved a version
    of it, whatever version: where an edited action is tried first (`tactics.first_rung`)."""
    out: dict[str, list] = {}
    for _, s in seeds:
        if _refused(store, s) is not None:
            continue
        if store.other_tactic(s.get("context")):
            ours = [store.under_of(s["context"])]
            names = {a: ours for a in store.actions}
        else:
            names = {a: unders(r.get("under")) for a, r in _rungs(s).items()}
        for a, u in names.items():
            out[a] = unders([*out.get(a, []), *u])
    return {a: u for a, u in out.items() if u}


def split_of(game: Game, options: ProveOptions, seeds,
             digests: dict | None = None) -> tuple[str, ...] | None:
    """The case split under which a stored proof of this run (``seeds``: (name, seed) pairs)
    was made, when it is not the ladder's own (`tactics.pinning_fields`): the pinned fields
    and one state field more, after them or before.  Of a seed whose candidates are this
    run's first (`state_invariants`) and whose context is this run's under that split; None
    when none is.  A proof made with an expert's ``--split-on`` is then re-made with no flag
    from its seed.  ``digests``: the program's `part_digests`, where the caller has them."""
    seeds = [s for _, s in seeds if isinstance(s, dict) and s.get("format") == SEED_FORMAT]
    if options.split_on or not options.auto or not seeds:
        return None
    d = part_digests(game.p) if digests is None else digests
    cand = sorted(d[f"invariant:{i.name}"] for i in state_invariants(game, options))
    ours = [s for s in seeds if s.get("candidates") == cand]
    if not ours:
        return None
    base = tactics.ladder(game, options)[0][1]
    pinned = base.split_on
    tries = [(*pinned, f.name) for f in game.p.state if f.name not in pinned] + \
        [(f.name, *pinned) for f in game.p.state if f.name not in pinned]
    for split in tries:
        opts = replace(base, split_on=split)
        made = {context(game, opts, d), context(game, opts, d, legacy=True)}
        if any(s.get("context") in made for s in ours):
            return split
    return None
