"""Seeded random playouts and what a designer reads from many of them: how often each seat
wins, the mean and spread of its score, how long a game lasts, and, for a reading, how often
choosing another of its options changes who wins the same game.

Each game has its own seed (`game_rng`), so game k is the same whatever came before it: the
games of one seed under two options of a reading are the same deals and the same choices for
as long as the rules let them be, and a run stopped part-way is a prefix of the full one."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ..engine.game import Game


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
