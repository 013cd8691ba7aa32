"""The journal of a proof: each action path of the inductive step recorded once checked, so
that a proof of hours that is stopped resumes where it stopped."""
from __future__ import annotations

import json

import z3

from ..engine.game import Game
from ..lang.errors import RulebookError
from .options import ProveOptions


def run_key(game: Game, options: ProveOptions, invs) -> dict:
    """What a proof's inductive step depends on, under ``options`` and with the candidate
    invariants ``invs``: a journal of another run is not reused.  The spec counts by its
    rules, invariants and transitions (`proof_digest`, as for a stored proof): a changed
    puzzle or example leaves a journal of hours current."""
    from ..lang.digest import proof_digest
    return {"game": game.name, "spec": proof_digest(game),
            "params": sorted(game.p.param_values.items()),
            "readings": sorted(game.symbols.reading_choices.items()),
            "step_timeout_ms": options.step_timeout_ms, "split_lengths": options.split_lengths,
            "exact_reals": options.exact_reals, "split_on": list(options.split_on),
            **({"opaque_fix": True} if options.opaque_fixpoints else {}),
            **({"region_facts": True} if options.region_facts else {}),
            "invariants": [i.name for i in invs], "z3": z3.get_version_string(), "format": 2}


class Journal:
    """The action paths of the inductive step checked so far, one JSON line each, after a
    first line naming the run (`run_key`): a proof of hours that is stopped resumes where
    it stopped.  A path counts only for the Houdini round it was checked in (the same
    candidates), the same case and the same action at the same place in the case's paths;
    the candidates it broke come back with their reasons.  The transition properties' paths
    are recorded too (``"kind": "transition"``), each with the invariants it assumed, and
    a case whose every path held them (``"kind": "transition-case"``).  A
    path on which z3 timed out is not recorded: a time-out says more of the machine's load
    than of the rules.  The proof's own process alone appends (one short write a line; a
    Dask worker's records come back to it).  A line cut short by a kill is skipped."""

    def __init__(self, path, key: dict, say):
        self.path = str(path)
        self.label = f"journal {self.path}"
        self.records: list[dict] = []
        self.say = say
        lines = []
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            pass
        except OSError as e:
            raise RulebookError(f"{self.path}: cannot read the journal: {e.strerror}") from None
        key = json.loads(json.dumps(key))   # as it reads back: tuples are lists in JSON
        head = _json_line(lines[0]) if lines else None
        if head is not None and head.get("journal") == key:
            self.records = [r for r in map(_json_line, lines[1:]) if r is not None]
            paths = sum(1 for r in self.records
                        if r.get("kind") not in ("case", "transition-case"))
            say(f"journal {self.path}: {paths} paths recorded by a previous run")
        else:
            if lines:
                say(f"journal {self.path} is of another run (spec, parameters or options "
                    f"differ): starting afresh")
            try:
                with open(self.path, "w", encoding="utf-8") as f:
                    f.write(json.dumps({"journal": key}) + "\n")
            except OSError as e:
                raise RulebookError(f"{self.path}: cannot write the journal: "
                                    f"{e.strerror}") from None

    def checked(self, case: int, actions: list[str], candidates) -> dict[int, dict]:
        """The paths of ``case`` checked under ``candidates``: path number -> the candidates
        it broke, with why."""
        out: dict[int, dict] = {}
        skipped: dict[int, set] = {}
        for at, r in self._of_case("step", case, actions, "candidates", candidates):
            out[at] = dict(r.get("fell") or {})
            skipped[at] = set(r.get("skipped") or ())
        # A path that left out a candidate fallen before it counts only if that candidate
        # falls again here (on a path recorded too).
        fallen = {n for fell in out.values() for n in fell}
        return {at: fell for at, fell in out.items() if skipped[at] <= fallen}

    def case_done(self, case: int, candidates) -> int | None:
        """The number of paths of ``case`` when a previous run checked every one under
        ``candidates``, none breaking one and none timing out (`record_case`), else None."""
        names = sorted(candidates)
        return next((int(r.get("paths") or 0) for r in self.records
                     if r.get("kind") == "case" and r.get("case") == case
                     and r.get("candidates") == names), None)

    def record_case(self, case: int, candidates, paths: int) -> None:
        """Every path of ``case`` held every candidate: a run that resumes does not build
        the case again.  Not written when a candidate fell (or z3 gave up on one) there."""
        self._append({"kind": "case", "case": case, "candidates": sorted(candidates),
                      "paths": paths})

    def decided_groups(self, case: int, actions: list[str], candidates) -> dict[str, list]:
        """Nothing: a journal keeps whole cases (`case_done`), not actions' groups (the
        store's `decided_groups`); its paths are numbered within the whole case."""
        return {}

    def record_groups(self, case: int, built: dict[str, int], candidates) -> None:
        """Nothing (see `held_groups`)."""

    def transition_held_groups(self, case: int, actions: list[str], assumed,
                               properties) -> dict[str, int]:
        return {}

    def record_transition_groups(self, case: int, built: dict[str, int], assumed,
                                 properties) -> None:
        """Nothing (see `held_groups`)."""

    def record(self, case: int, at: int, action: str, candidates, fell: dict,
               skipped: list, by: str | None = None, seconds: float | None = None) -> None:
        """``by``: the symmetry the path followed by, when it was not proved itself;
        ``seconds``: how long its proof took."""
        self._append({"case": case, "path": at, "action": action,
                      "candidates": sorted(candidates), "fell": fell, "skipped": skipped,
                      **({"by": by} if by else {}),
                      **({"seconds": round(seconds, 3)} if seconds is not None else {})})

    def spent(self, case: int, actions: list[str], candidates) -> dict[str, list]:
        """Per action, [paths, seconds] of the proofs recorded for ``case`` under
        ``candidates`` (those that say how long they took): how costly its paths are."""
        out: dict[str, list] = {}
        for _, r in self._of_case("step", case, actions, "candidates", candidates):
            if isinstance(r.get("seconds"), (int, float)) and "by" not in r:
                t_ = out.setdefault(r["action"], [0, 0.0])
                t_[0] += 1
                t_[1] += r["seconds"]
        return out

    def transitions_checked(self, case: int, actions: list[str], assumed) -> dict[int, dict]:
        """The transition verdicts a previous run reached on the paths of ``case`` from the
        same ``assumed`` invariants: path number -> {property: None (holds there) or why it
        fails}.  A property z3 gave up on is not among them."""
        out: dict[int, dict] = {}
        for at, r in self._of_case("transition", case, actions, "assumed", assumed):
            out.setdefault(at, {}).update(r.get("verdicts") or {})
        return out

    def transition_case_done(self, case: int, assumed, properties) -> int | None:
        """The number of paths of ``case`` when a previous run found every one of
        ``properties`` holding on every one of them, from the same ``assumed`` invariants
        (`record_transition_case`), else None."""
        names, props = sorted(assumed), set(properties)
        return next((int(r.get("paths") or 0) for r in self.records
                     if r.get("kind") == "transition-case" and r.get("case") == case
                     and r.get("assumed") == names
                     and props <= set(r.get("properties") or ())), None)

    def record_transition_case(self, case: int, assumed, properties, paths: int) -> None:
        """Every path of ``case`` held each of ``properties``: a run that resumes does not
        build the case again for them (on a large board a case takes minutes to build, and
        the pass builds every case).  Not written when one failed, or z3 gave up on one,
        there."""
        self._append({"kind": "transition-case", "case": case, "assumed": sorted(assumed),
                      "properties": sorted(properties), "paths": paths})

    def _of_case(self, kind: str, case: int, actions: list[str], field: str, names) -> list:
        """(path number, record) for the records of ``kind`` and ``case`` whose ``field``
        holds ``names``; none at all when one of them is of another path than ``actions``
        says (the journal is then another run's)."""
        names = sorted(names)
        out = []
        for r in self.records:
            if r.get("kind", "step") != kind or r.get("case") != case or r.get(field) != names:
                continue
            at = r.get("path")
            if not isinstance(at, int) or not 0 <= at < len(actions) \
                    or actions[at] != r.get("action"):
                self.say(f"journal {self.path}: its paths are not this run's (path {at}): "
                         f"not used")
                return []
            out.append((at, r))
        return out

    def record_transition(self, case: int, at: int, action: str, assumed,
                          verdicts: dict, by: str | None = None) -> None:
        self._append({"kind": "transition", "case": case, "path": at, "action": action,
                      "assumed": sorted(assumed), "verdicts": verdicts,
                      **({"by": by} if by else {})})

    def _append(self, record: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _json_line(line: str):
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None

