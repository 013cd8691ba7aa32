"""Seeded random playouts and what a designer reads from many of them: how often each seat
wins, the mean and spread of its score, how long a game lasts, and, for a reading, how often
choosing another of its options changes who wins the same game.

Each game has its own seed (`game_rng`), so game k is the same whatever came before it: the
games of one seed under two options of a reading are the same deals and the same choices for
as long as the rules let them be, and a run stopped part-way is a prefix of the full one.

`outcomes` plays a range of games in this process, or, given a `workpool.Pool`, on its Dask
workers in shares of consecutive games (`play_share`, one task a share, each worker loading
the game once), their outcomes coming back in the games' order: the same games, the same
outcomes, whichever process played them."""
from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from ..engine.game import Game
from ..engine.workpool import Pool, Recipe
from ..lang.errors import EvalError

# At most this many games a task, and about this many tasks a worker: a worker dealt long
# games does not play alone while the others wait, and a Ctrl-C loses little.
SHARE_MAX = 50
SHARES_PER_WORKER = 8


def game_rng(seed: int, k: int) -> random.Random:
    """The random choices of game ``k`` (0-based) of ``seed``: the first game is the one
    `Random(seed)` plays (a single game is what it always was), game k after it plays from
    the text ``"seed/k"`` (string seeds are hashed by SHA-512: the same in every process)."""
    return random.Random(seed if k == 0 else f"{seed}/{k}")


@dataclass(frozen=True)
class Played:
    """One game's outcome: its length, each player's score and the winners (None where the
    spec declares no `score` or no `winner`)."""

    moves: int
    scores: tuple | None
    winners: tuple | None

    def as_json(self) -> dict:
        return {"moves": self.moves,
                "scores": None if self.scores is None else list(self.scores),
                "winners": None if self.winners is None else list(self.winners)}


class Player:
    """Plays seeded games of one game and reads their outcomes."""

    def __init__(self, game: Game):
        self.game = game
        pt = game.p.types.get("Player")
        self.score = game.expr("score(p)", {"p": pt})[0] if game.has_def("score") and pt \
            else None
        self.win = game.expr("winner(p)", {"p": pt})[0] if game.has_def("winner") and pt \
            else None
        self.players = list(range(game.p.param_values.get("players", 0)))

    def outcome(self, st, moves: int) -> Played:
        """The outcome of a game that ended in ``st`` after ``moves`` moves."""
        return Played(moves,
                      tuple(self.score(st, p) for p in self.players) if self.score else None,
                      tuple(p for p in self.players if self.win(st, p)) if self.win else None)

    def play(self, seed: int, k: int) -> Played:
        st, n = self.game.playout(game_rng(seed, k))
        return self.outcome(st, n)


def outcomes(players: list[Player], seed: int, ks: range, pool: Pool | None = None,
             recipes: tuple = (), say=None, total: int | None = None, note: str = ""):
    """Yield (k, the outcome of game ``k`` of ``seed`` under each of ``players``) for each
    ``k`` of ``ks`` in order; a game the rules leave without a move is an `EvalError` naming
    it.  With ``pool`` (and ``recipes``: how a worker loads each player's game), the games
    are played in this process until `Pool.ahead` says otherwise, the rest as Dask tasks of
    consecutive games; ``say`` hears "games played" (done: the games yielded, of ``total``;
    ``note`` beside)."""
    began = time.monotonic()
    k = ks.start
    while k < ks.stop and (pool is None or pool.ahead(began)):
        if say is not None:
            say("games played", done=k, total=total, note=note)
        yield k, _one(players, seed, k)
        k += 1
    if k >= ks.stop:
        return
    if not pool.start():        # no Dask installed: the rest here
        yield from outcomes(players, seed, range(k, ks.stop), None, recipes, say, total, note)
        return
    n = max(1, len(pool.names()))
    size = max(1, min(SHARE_MAX, math.ceil((ks.stop - k) / (n * SHARES_PER_WORKER))))
    shares = [(lo, min(lo + size, ks.stop)) for lo in range(k, ks.stop, size)]
    if say is not None:
        say(f"games {k + 1} to {ks.stop} sent to {n} Dask workers in {len(shares)} tasks")
    for (lo, _), got in zip(shares, pool.ordered(play_share, shares, tuple(recipes), seed)):
        for j, played in enumerate(got):
            if isinstance(played, str):
                raise EvalError(f"game {lo + j + 1} of seed {seed}: {played}")
            yield lo + j, played
        if say is not None:
            say("games played", done=lo + len(got), total=total, note=note)


def _one(players: list[Player], seed: int, k: int) -> tuple:
    try:
        return tuple(pl.play(seed, k) for pl in players)
    except EvalError as e:      # a dead end of the rules: say which game
        raise EvalError(f"game {k + 1} of seed {seed}: {e.message}", e.span, e.source) \
            from None


def play_share(share: tuple, recipes: tuple, seed: int) -> list:
    """A task: games ``share`` (lo, hi) of ``seed`` under each of ``recipes``, played on a
    Dask worker (each recipe's `Player` kept there for the next tasks): one tuple of outcomes
    a game, or, for a game the rules leave without a move, its message, the last item."""
    from ..engine.workerside import held
    players = [held(("player", r), lambda r=r: Player(r.load())) for r in recipes]
    out: list = []
    for k in range(*share):
        try:
            out.append(tuple(pl.play(seed, k) for pl in players))
        except EvalError as e:
            out.append(e.message)
            break
    return out


def _mean_sd(xs: list) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def summary(games: list[Played], players: int) -> dict:
    """Win count and rate by seat (a game with several winners counts for each), mean and
    standard deviation of each seat's score, and the game length (mean, deviation, least,
    most), over ``games`` (not empty)."""
    n = len(games)
    out: dict = {"games": n}
    lengths = [g.moves for g in games]
    m, sd = _mean_sd(lengths)
    out["length"] = {"mean": round(m, 2), "sd": round(sd, 2), "min": min(lengths),
                     "max": max(lengths)}
    if games[0].winners is not None:
        wins = [sum(p in g.winners for g in games) for p in range(players)]
        out["wins"] = wins
        out["win_rate"] = [round(w / n, 4) for w in wins]
        out["no_winner"] = sum(not g.winners for g in games)
    if games[0].scores is not None:
        stats = [_mean_sd([g.scores[p] for g in games]) for p in range(players)]
        out["score_mean"] = [round(m, 2) for m, _ in stats]
        out["score_sd"] = [round(sd, 2) for _, sd in stats]
    return out


def winner_changed(base: list[Played], other: list[Played]) -> int:
    """In how many of the games played on the same seeds the winners differ."""
    return sum(a.winners != b.winners for a, b in zip(base, other))
