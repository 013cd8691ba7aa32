"""Puzzles: the spec's `puzzle` declarations answered from JSON, by interpreter search or by Z3.

A puzzle object names its ``game`` (and ``variants``, ``puzzle``), then one key per `input` of
the spec's puzzle.  Each `query` of the puzzle yields the answers it declares: ``found`` (a
bool), ``steps`` (the shown items of each move of one best solution) and ``best`` (the optimum).

This module dispatches each query to a backend: `puzzlesearch` (the interpreter) or `puzzlez3`;
`puzzleprep` reads the puzzle and replays the solvers' runs.
"""
from __future__ import annotations

import json

from ..lang import ir
from ..lang.codec import from_json, to_json
from ..lang.errors import Disagreement, InputError, stop_reason
from .puzzleprep import Prepared, prepare, query_actions, query_start, step_json
from .puzzlesearch import Stopped, search_all, search_query, search_runs
from .puzzlez3 import z3_all, z3_query, z3_runs

BACKENDS = ("search", "z3")
DEFAULT_BACKEND = "search"


def solve(obj: dict, backend: str = DEFAULT_BACKEND, timeout_ms: int = 60_000,
          where: str = "puzzle", progress=None) -> dict:
    """The puzzle's answers.  ``progress`` (a function of one line of text), if given, hears
    how a long search goes: each better run found, and every few seconds the states met."""
    prep = prepare(obj, where)
    out: dict = {}
    for q in prep.puzzle.queries:
        if q.when is not None and q.when not in prep.present:
            for key, _ in q.answers:
                out[key] = None
            continue
        try:
            res = run_query(prep, q, backend, timeout_ms, progress)
        except Stopped as e:
            # What an exhaustive search found before it was stopped, and what that covers.
            e.answer = {**out, **_partial(prep, q, e)}
            raise
        for key, kind in q.answers:
            out[key] = res[kind]
        if res.get("incumbent") is not None:
            # Out of time before the optimum was proved: the best run found so far (replayed
            # in the interpreter) and what the optimum is known to be at most, under the
            # query's own answer names (two queries may each run out of time).
            value, steps, at_most = res["incumbent"]
            found = {key: (value if kind == "best" else steps)
                     for key, kind in q.answers if kind in ("best", "steps")}
            out.setdefault("best_found", {}).update(found)
            out.setdefault("at_most", {}).update(
                {key: at_most for key, kind in q.answers if kind == "best"})
    return out


def _partial(prep: Prepared, q: ir.Query, e: Stopped) -> dict:
    """The answers of query ``q`` from a search stopped part-way: the runs or choices found
    so far ("runs", "count", "all"), the rest unknown, with the scope they cover."""
    out: dict = {}
    incumbent = getattr(e, "incumbent", None)
    if incumbent is not None:
        best, at_most = incumbent
        for key, kind in q.answers:
            out[key] = best[1] if kind == "steps" and best else "unknown"
            if kind == "best":
                if best:
                    out.setdefault("best_found", {})[key] = best[0]
                out.setdefault("at_most", {})[key] = at_most
        return {**out, "stopped": stop_reason(e.stop), "scope": e.scope}
    if any(kind == "all" for _, kind in q.answers):
        et = q.choose.domain.elem
        found = sorted(to_json(et, c) for c in e.found)
        part = {"found": True if found else "unknown", "all": found}
    else:
        runs = sorted(e.found, key=lambda r: json.dumps(r))
        part = {"found": True if runs else "unknown", "runs": runs, "count": len(runs),
                "steps": runs[0] if runs else None}
    for key, kind in q.answers:
        out[key] = part.get(kind, "unknown")
    out["stopped"] = stop_reason(e.stop)
    out["scope"] = e.scope
    return out


LISTING = ("legal", "illegal")


def run_query(prep: Prepared, q: ir.Query, backend: str, timeout_ms: int,
              progress=None) -> dict:
    """The answers of query ``q`` on ``backend`` (a dict keyed by answer kind)."""
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r} (one of {', '.join(BACKENDS)})")
    if any(kind == "all" for _, kind in q.answers):
        return _all_query(prep, q, backend, timeout_ms, progress)
    if any(kind in ("runs", "count") for _, kind in q.answers):
        # Every solution: the runs of at most `within` moves that reach the goal (a run stops
        # at its first goal state), sorted for output.
        runs = search_runs(prep, q, progress) if backend == "search" \
            else z3_runs(prep, q, timeout_ms)
        if runs == "unknown":
            return {"found": "unknown", "steps": None, "best": None, "runs": "unknown",
                    "count": "unknown"}
        runs = sorted(runs, key=lambda r: json.dumps(r))
        return {"found": bool(runs), "steps": runs[0] if runs else None, "best": None,
                "runs": runs, "count": len(runs)}
    kinds = {k for _, k in q.answers}
    res: dict = {}
    if kinds & set(LISTING):
        res.update(_listing(prep, q, backend, timeout_ms))
    if not kinds or kinds - set(LISTING):
        if backend == "search":
            res.update(search_query(prep, q, timeout_ms, progress))
        else:
            res.update(z3_query(prep, q, timeout_ms))
    return res


def _listing(prep: Prepared, q: ir.Query, backend: str, timeout_ms: int) -> dict:
    """Every move of the query's actions from its `from` state: legal, or the rule refusing it."""
    from .listing import search_listing, z3_listing
    st, env = query_start(prep, q)
    actions = query_actions(prep, q, st, env)
    if backend == "search":
        return search_listing(prep.game, st, actions)
    return z3_listing(prep.game, st, actions, timeout_ms)


# ---- `answer x = all`: every choice for which the goal is reachable ----------------------------

def _all_query(prep: Prepared, q: ir.Query, backend: str, timeout_ms: int,
               progress=None) -> dict:
    """The sorted JSON of every value of the query's `choose` for which a solution exists."""
    if q.choose is None or not isinstance(q.choose.domain, ir.TypeDomain):
        raise InputError("`answer ... = all` needs a `choose x in T` over a finite type")
    et = q.choose.domain.elem
    if backend == "search":
        found = search_all(prep, q, progress)
    elif backend == "z3":
        found = z3_all(prep, q, et, timeout_ms)
        if found is None:
            return {"found": "unknown", "steps": None, "best": None, "all": "unknown"}
    else:
        raise InputError(f"unknown backend {backend!r} (one of {', '.join(BACKENDS)})")
    out = sorted(to_json(et, c) for c in found)
    return {"found": bool(found), "steps": None, "best": None, "all": out}


# ---- pictures: the state a solution reaches --------------------------------------------------

def solution_state(prep: Prepared, q: ir.Query, answer: dict):
    """The state after the first solution's steps (replayed by matching each shown step among
    the legal moves), the points (``[x, y, z]`` lists) the last step shows, and the number of
    steps replayed.  The start state when the query has a choice or no solution."""
    steps = _first_steps(q, answer)
    if q.choose is not None or not steps:
        return query_start(prep, q)[0], frozenset(), 0
    moves = replay_steps(prep, q, steps)
    return moves[-1][2], frozenset(_points(steps[-1])), len(steps)


def _first_steps(q: ir.Query, answer: dict) -> list | None:
    steps = None
    for key, kind in q.answers:
        val = answer.get(key)
        if kind == "steps" and isinstance(val, list):
            steps = val
        elif kind == "runs" and isinstance(val, list) and val:
            steps = val[0]
    return steps


def replay_steps(prep: Prepared, q: ir.Query, steps: list) -> list:
    """The shown ``steps`` of a solution replayed from the query's start: (state before,
    move, state after) each, each step matched among the legal moves."""
    game = prep.game
    st, env = query_start(prep, q)
    actions = query_actions(prep, q, st, env)
    out = []
    for step in steps:
        for m, st2, shows in game.legal(st, actions):
            if step_json(game, m, shows) == step:
                out.append((st, m, st2))
                st = st2
                break
        else:
            raise Disagreement(f"the step {step} does not replay in the interpreter")
    return out


def last_move(prep: Prepared, q: ir.Query, answer: dict):
    """The first solution's last move and the state before it (a picture draws that move),
    or None when the answer has no steps."""
    steps = _first_steps(q, answer)
    if q.choose is not None or not steps:
        return None
    before, m, _ = replay_steps(prep, q, steps)[-1]
    return before, m


def chosen_values(prep: Prepared, q: ir.Query, answer: dict) -> list:
    """The values an `answer x = all` of the query names (every choice with a solution: the
    squares a piece reaches, say), as values of the choice's type; [] for other answers."""
    if q.choose is None or not isinstance(q.choose.domain, ir.TypeDomain):
        return []
    et = q.choose.domain.elem
    out = []
    for key, kind in q.answers:
        val = answer.get(key)
        if kind == "all" and isinstance(val, list):
            out.extend(from_json(et, j, key) for j in val)
    return out


def _points(j):
    if isinstance(j, list):
        if len(j) == 3 and all(isinstance(x, int) and not isinstance(x, bool) for x in j):
            yield tuple(j)
        else:
            for x in j:
                yield from _points(x)
