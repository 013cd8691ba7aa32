"""The tactics `rulebook prove` picks when it is given none (`ProveOptions.auto`).

A proof is a ladder of passes over the inductive step, each under one abstraction of the step
(`ladder`): first the plain step (fixpoints unrolled, each `exists real` an uninterpreted
predicate); then, only if z3 gave up on some path (a time-out, never a counterexample), the
abstraction the spec's features call for: the facts of connected regions where the rules read
`component`/`components`, fixpoints read as uninterpreted functions where they have other
`fix`es, and `exists real` decided exactly where they have some.  Every abstraction is sound, so
an action whose every path held under one is held under all: the proof store keeps such groups
for every rung (`Store.anywhere_keys`), and a later rung builds and checks only the actions the
earlier ones left open.  Within every rung a path gets `STEP_TIMEOUT_MS` per query, a query z3
gives up on is tried again case by case over the lengths of the sequences the step changes
(`split_lengths`); a rung that unrolls fixpoints reads one as uninterpreted functions once
its unrolling has taken `FIX_BUDGET_MS` (a path built so that breaks a candidate counts as a
time-out, left to the next rung); the last rung is tried once more with `LONG_TIMEOUT_MS`;
and a path that is the mirror image of a proved one under the board's symmetries follows
from it (`symmetric`; "none used" where the board has none).

Every rung splits the step into cases over the state fields the actions use as keys of
constant tables (`pinning_fields`: a piece's kind keying its shape tables, which would
otherwise be carried whole in every term).  Left to the expert flags: other case splits
over a state field (``--split-on``, which then replaces these) and proving a part of the
invariants alone (``--alone``)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..engine.game import Game
from ..lang import ir
from ..lang.irwalk import nodes
from .options import ProveOptions, under

# A step query's time limit in every rung (the stored proofs of a large board needed 20 s),
# and in the last rung tried again with the longer one (some stored proofs needed 60 s).
STEP_TIMEOUT_MS = 20_000
LONG_TIMEOUT_MS = 60_000
# How long a fixpoint may take to unroll, in building a path, before the rungs that unroll
# fixpoints read it as uninterpreted functions (`ProveOptions.fix_budget_ms`): a collapse
# computed as a fixpoint of twelve steps, each flooding what every piece carries, built no
# path of its action in ten minutes unrolled (docs/prover.md).
FIX_BUDGET_MS = 10_000
REGION_BUILTINS = frozenset({"component", "components"})


@dataclass(frozen=True)
class Features:
    """What in the rules an abstraction of the step is for."""

    regions: bool       # the region builtins
    fixpoints: bool     # a `fix` (a flood)
    reals: bool         # an `exists real`


def features(p: ir.Program) -> Features:
    """The features of the rules the step reads: the actions and the invariants."""
    regions = fixpoints = reals = False
    for part in (*p.actions, *p.invariants):
        for n in nodes(part):
            if isinstance(n, ir.Builtin) and n.name in REGION_BUILTINS:
                regions = True
            elif isinstance(n, ir.Fix):
                fixpoints = True
            elif isinstance(n, ir.RealExists):
                reals = True
    return Features(regions, fixpoints, reals)


def _constant_root(e) -> bool:
    while isinstance(e, ir.Index):
        e = e.coll
    return isinstance(e, ir.Const)


def pinning_fields(p: ir.Program) -> tuple[str, ...]:
    """The state fields the actions use as keys of constant tables (`T[f]`,
    directly or through a def's parameter): a case split on one makes each case read one
    entry of those tables, where the whole step would carry every entry as a term."""
    found: set[str] = set()
    for a in p.actions:
        alias: dict[int, int] = {}          # a def parameter's slot -> the field passed
        for n in nodes(a):
            if isinstance(n, ir.Call):
                for arg, slot in zip(n.args, n.slots):
                    f = _field(arg, alias)
                    if f is not None:
                        alias[slot] = f
            elif isinstance(n, ir.Index) and _constant_root(n.coll):
                f = _field(n.key, alias)
                if f is not None:
                    found.add(p.state[f].name)
    return tuple(sorted(found))


def _field(e, alias: dict) -> int | None:
    if isinstance(e, ir.Field) and isinstance(e.record, ir.StateRef) and not e.record.old:
        return e.index
    if isinstance(e, ir.Local):
        return alias.get(e.slot)
    return None


def ladder(game: Game, options: ProveOptions, remote: bool = False,
           split: tuple[str, ...] | None = None) -> list[tuple[str, ProveOptions]]:
    """The passes of an automatic proof of ``game`` (see the module's doc), each named, from
    ``options`` (whose scope, depth, store and limits they keep).  ``remote``: the paths go
    to Dask workers, which build them only without the symmetry (its orbits are found where
    the paths are built, so the parent would build every case): then no symmetry.
    ``split``: the case split of a stored proof of this run (`seed.split_of`), kept where the
    caller gives none, instead of the pinned fields'."""
    f = features(game.p)
    base = replace(options, auto=False, split_lengths=True, symmetric=not remote,
                   step_timeout_ms=STEP_TIMEOUT_MS, exact_reals=False, opaque_fix=False,
                   region_facts=False, fix_budget_ms=FIX_BUDGET_MS if f.fixpoints else None,
                   split_on=options.split_on or split or pinning_fields(game.p))
    rungs = [("the plain step", base)]
    if f.regions:
        rungs.append(("the facts of connected regions", replace(base, region_facts=True)))
    elif f.fixpoints:
        rungs.append(("fixpoints as uninterpreted functions", replace(base, opaque_fix=True)))
    if f.reals:
        rungs.append(("exact reals", replace(base, exact_reals=True)))
    name, last = rungs[-1]
    rungs.append((f"{name}, {LONG_TIMEOUT_MS // 1000} s a query",
                  replace(last, step_timeout_ms=LONG_TIMEOUT_MS)))
    return rungs


def first_rung(rungs: list[tuple[str, ProveOptions]], hints: dict[str, list],
               actions) -> int:
    """The pass of ``rungs`` a re-proof tries first when ``actions`` are left to check: the
    latest pass whose abstraction of the step (`options.under`) proved one of them in a stored
    proof (``hints``: action name -> the abstractions a version of it held under; an action
    held under several, in several cases, needed the latest).  0, the ladder from its start,
    when one of them has no hint or a hint of no pass here."""
    at = 0
    for a in actions:
        wanted = hints.get(a) or [None]
        for u in wanted:
            ks = [k for k, (_, o) in enumerate(rungs) if under(o) == u]
            if not ks:
                return 0
            at = max(at, ks[0])
    return at


def describe(options: ProveOptions) -> str:
    """The flags that run one rung by hand."""
    flags = [f"--step-timeout {options.step_timeout_ms / 1000:g}"]
    flags += ["--split-lengths"] * options.split_lengths + ["--symmetry"] * options.symmetric
    flags += ["--region-facts"] * options.region_facts + ["--exact-reals"] * options.exact_reals
    flags += ["--opaque-fix"] * (options.opaque_fix and not options.region_facts)
    if options.fix_budget_ms is not None and not options.opaque_fixpoints:
        flags += [f"--fix-budget {options.fix_budget_ms / 1000:g}"]
    return " ".join(flags)
