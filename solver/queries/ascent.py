"""Ambiguities searched from the smallest sizes upward, each witness given as soon as found.

A symbolic comparison of two readings costs with the size of the state: on the game's own
board (Torres' 8 x 8, four players) it runs for many minutes where a board of a few squares
answers in seconds.  So, unless the caller pins them, the parameters that set how large a
state is start at the lowest value their `param` declaration allows and go up one step at a
time toward the game's own values.  Which parameters those are, and how far each goes, is read
from the spec alone: a parameter is a size when the state has fewer leaves at its lowest
declared value than at the game's value (a board's width, the number of players); one that
changes no field's extent (a count of blocks per stack, a variant switch) keeps the game's
value.  Each step up raises the one size whose step adds the fewest leaves (ties: the first
declared), so the ladder of parameter sets is the same for every pair of readings.

Each pair of readings climbs the ladder until z3 finds a witness (then it is presented on the
game's own parameters where it carries over, `embed.present`, and on those it was found on
otherwise), proves that none exists on the game's own parameters, or gives up (then the
states of the spec's examples are tried, as `readings.pair_ambiguity` does).  A witness found
on a small board is a disagreement of the rules there; the record names where it was found
(``searched_on``) and the smaller parameter sets that showed none (``tried``).

Each pair is searched in a fresh z3 (`engine.game.fresh_z3`), so its witness does not depend on
the pairs searched before it; given a `workpool.Pool`, the pairs are Dask tasks (`pair_task`),
their witnesses streamed back in the pairs' order: the same output as one process."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..engine.game import Game, fresh_z3, load_game, load_state_type
from ..engine.workpool import Pool, Recipe
from ..lang.codec import from_json
from ..lang.errors import RulebookError, TimeUp
from ..lang.progress import reporter
from ..lang.types import IntT, leaf_count
from .embed import present
from .readings import Ambiguity, examples_first, pair_ambiguity, reading_pairs, variants_of


@dataclass
class Ladder:
    """The parameter sets to search, smallest first (`sizes`), built as they are needed."""

    game: Game
    sizes: list[str]                                 # the size parameters, in spec order
    steps: list[dict] = field(default_factory=list)
    leaves: dict = field(default_factory=dict)       # params (sorted tuple) -> state leaves

    @classmethod
    def of(cls, game: Game, pinned=()) -> "Ladder":
        own = game.p.param_values
        sizes = []
        for prm in game.p.params:
            lo = prm.type.lo if isinstance(prm.type, IntT) else None
            if prm.name in pinned or lo is None or lo >= own[prm.name]:
                continue
            lad = cls(game, [])
            if lad.leaf_count({**own, prm.name: lo}) < leaf_count(game.state_type):
                sizes.append(prm.name)
        lad = cls(game, sizes)
        lad.steps.append({**own, **{n: _lowest(game, n) for n in sizes}})
        return lad

    def leaf_count(self, params: dict) -> int:
        key = tuple(sorted(params.items()))
        if key not in self.leaves:
            variants = tuple(v for v in variants_of(self.game) if ":" not in v)
            self.leaves[key] = leaf_count(load_state_type(self.game.source, variants, key))
        return self.leaves[key]

    def at(self, k: int) -> dict | None:
        """The ``k``-th parameter set (0: every size at its lowest), or None past the game's
        own."""
        own = self.game.p.param_values
        while len(self.steps) <= k:
            last = self.steps[-1]
            ups = [{**last, n: last[n] + 1} for n in self.sizes if last[n] < own[n]]
            if not ups:
                return None
            self.steps.append(min(ups, key=self.leaf_count))
        return self.steps[k]


def _lowest(game: Game, name: str) -> int:
    return next(p.type.lo for p in game.p.params if p.name == name)


def _load(game: Game, params: tuple, *more: str) -> Game:
    """The game (with its expansions, and the variants ``more``) under ``params``."""
    variants = tuple(v for v in variants_of(game) if ":" not in v)
    return load_game(game.source, variants + more, params)


def scope(params: dict) -> str:
    """``players=2 w=3 h=2``: a parameter set as the command line would set it."""
    return " ".join(f"{k}={v}" for k, v in params.items())


@dataclass
class Climb:
    """Where the search is (for a caller that stops it part-way): the pair of readings being
    searched and the parameters it is on, and the pairs finished."""

    pair: tuple | None = None
    params: dict | None = None
    tried: list = field(default_factory=list)
    done: int = 0
    total: int = 0


def ambiguities(game: Game, only: str | None = None, timeout_ms: int = 120_000,
                progress=None, invariants: bool = False, pinned=(),
                deadline: float | None = None, where: Climb | None = None,
                pool: Pool | None = None, recipe: Recipe | None = None):
    """Yield, for each pair of options of each reading (or of ``only``), where they disagree,
    searched upward from the smallest sizes (the parameters in ``pinned`` keep the game's
    values): see the module's docstring.  ``where`` (a `Climb`) is kept up to date, for a
    caller stopped part-way; ``deadline`` (a `time.monotonic()` instant) bounds every z3
    query, past it `TimeUp`.  ``progress``: see `lang.progress`.  With ``pool`` (and
    ``recipe``, how a worker loads ``game``), the pairs are searched in this process until
    `Pool.ahead` says otherwise, the rest one Dask task a pair (`pair_task`), yielded in the
    same order, the same witnesses (a worker's climb is not followed in ``where``)."""
    say = reporter(progress)
    where = where if where is not None else Climb()
    pairs = reading_pairs(game, only)
    where.total = len(pairs)
    ladder = Ladder.of(game, pinned)
    began = time.monotonic()
    k = 0
    while k < len(pairs):
        # Without Dask installed (`Pool.start`), every pair here.
        if pool is not None and not pool.ahead(began) and pool.start():
            break
        r, a, b = pairs[k]
        say("reading pairs", done=k, total=len(pairs))
        amb = climb(game, ladder, r, a, b, timeout_ms, invariants, say, deadline, where)
        k += 1
        where.done = k
        yield amb
    if k < len(pairs):
        jobs = [(r.name, a, b) for r, a, b in pairs[k:]]
        say(f"reading pairs {k + 1} to {len(pairs)} sent to {len(pool.names())} Dask workers, "
            f"one task a pair")
        until = None if deadline is None else time.time() + deadline - time.monotonic()
        where.pair, where.params, where.tried = jobs[0], None, []
        k0 = k
        for i, got in enumerate(pool.ordered(pair_task, jobs, recipe, timeout_ms, invariants,
                                             tuple(pinned), until)):
            if got is None:
                raise TimeUp(None)
            say("reading pairs", done=k0 + i, total=len(pairs))
            where.done = k0 + i + 1
            where.pair = jobs[i + 1] if i + 1 < len(jobs) else None
            yield _drawable(game, got)
    where.pair = where.params = None


def climb(game: Game, ladder: Ladder, r, a: str, b: str, timeout_ms: int, invariants: bool,
          say, deadline: float | None, where: Climb) -> Ambiguity:
    """Where options ``a`` and ``b`` of reading ``r`` disagree, up ``ladder`` (see the
    module's docstring); ``where`` follows it.  Searched in a fresh z3 (`fresh_z3`): the
    witness is the one a process that searched nothing else would find, so the same in one
    process as on any Dask worker, and the same whichever pairs were searched before."""
    with fresh_z3():
        return _climbed(game, ladder, r, a, b, timeout_ms, invariants, say, deadline, where)


def _climbed(game: Game, ladder: Ladder, r, a: str, b: str, timeout_ms: int,
             invariants: bool, say, deadline: float | None, where: Climb) -> Ambiguity:
    where.pair, where.tried = (r.name, a, b), []
    own = dict(game.p.param_values)
    step = 0
    while True:
        params = ladder.at(step)
        where.params = params
        say(f"{r.name}: {a} vs {b} on {scope(params)}"
            + (" (the game's own parameters)" if params == own else ""))
        t0 = time.monotonic()
        # On a parameter set too large for the symbolic search (`examples_first`), the
        # states of the spec's examples are searched first.
        key = tuple(sorted(params.items()))
        amb = pair_ambiguity(game, r, a, b, key, timeout_ms, invariants, say, deadline,
                             examples=examples_first(_load(game, key)))
        say(f"{r.name}: {a} vs {b} on {scope(params)}: "
            + ("a witness" if amb.found else "none" if amb.found is False
               else "z3 gave up") + f" ({time.monotonic() - t0:.1f} s)")
        if amb.found is False and params != own and ladder.at(step + 1) is not None:
            where.tried.append(dict(params))
            step += 1
            continue
        break
    if amb.found and amb.params is None and params != own:
        amb = _shown(game, amb, params, own, ladder.sizes)
    elif amb.params is None:
        amb.params = dict(params)
        if amb.found is None:
            amb.note = "z3 gave up on these parameters (no witness among the examples)"
    amb.tried = list(where.tried)
    return amb


def pair_task(pair: tuple, recipe: Recipe, timeout_ms: int,
              invariants: bool, pinned: tuple, until: float | None) -> Ambiguity | None:
    """A task: `climb` for the pair (reading, a, b) on a Dask worker (the game and its
    ladder kept there for the next pairs), the witness sent back as plain data (its game and
    state dropped: `_drawable` makes them again); None when ``until`` (a `time.time()`
    instant, the caller's deadline) passed first."""
    from ..engine.workerside import held
    game = held(("game", recipe), recipe.load)
    ladder = held(("ladder", recipe, pinned), lambda: Ladder.of(game, pinned))
    rn, a, b = pair
    r = next(rd for rd in game.p.readings if rd.name == rn)
    deadline = None if until is None else time.monotonic() + until - time.time()
    try:
        amb = climb(game, ladder, r, a, b, timeout_ms, invariants, reporter(None), deadline,
                    Climb())
    except TimeUp:
        return None
    amb.game = amb.state = None
    return amb


def _drawable(game: Game, amb: Ambiguity) -> Ambiguity:
    """A witness a worker found, its game (under reading ``a`` and its parameters) and its
    state made again here from its JSON, for the drawing."""
    if amb.state_json is None or amb.params is None:
        return amb
    ga = _load(game, tuple(sorted(amb.params.items())), f"{amb.reading}:{amb.a}")
    amb.game = ga
    amb.state = tuple(from_json(f.type, amb.state_json[f.name], f"witness state.{f.name}")
                      for f in ga.p.state)
    return amb


def _shown(game: Game, amb: Ambiguity, small: dict, own: dict, sizes: list) -> Ambiguity:
    """The witness ``amb``, found under ``small``, presented under the game's own parameters,
    or as near them as it carries over: each size that does not carry (a per-player table
    of two players is no table of four) stays as found, the first declared first."""
    kept: list[str] = []
    for n in [None] + sizes:
        if n is not None:
            kept.append(n)
        big = {**own, **{k: small[k] for k in kept}}
        if big == small:
            break
        try:
            return present(game.name, amb, small, big)
        except (RulebookError, StopIteration):
            continue
    amb.params = dict(small)
    amb.note = f"shown where found: it does not carry over to {scope(own)}"
    return amb
