"""What `rulebook play` prints: the games (at most ten listed in text), the summary of many
by seat, and the comparison of a reading's options; under --json, one document."""
from __future__ import annotations

import json

from ..lang.errors import stop_reason
from ..queries.playstats import summary, winner_changed


def report(args, g, base, games: list, under: dict, dt: float, stop,
                 trace: list | None = None) -> None:
    """What `play` prints: the games (at most ten listed in text), the summary, and the
    comparison of a reading's options; under --json, the first game's moves (--trace)."""
    players = len(base.players)
    chosen = next((r.chosen for r in g.p.readings if r.name == args.compare), None)
    out = {"game": g.name, "players": players, "seed": args.seed,
           "games": [p.as_json() for p in games],
           "summary": summary(games, players) if games else None,
           "seconds": round(dt, 3), "games_per_second": round(len(games) / dt, 1),
           **({"stopped": stop_reason(stop), "asked": args.games} if stop else {}),
           **({"trace": trace} if trace is not None else {})}
    if under:
        out["compare"] = {"reading": args.compare, "base": chosen, "options": {
            opt: {"summary": summary(ps, players) if ps else None,
                  "winner_changed": winner_changed(games, ps),
                  "games": [p.as_json() for p in ps]} for opt, ps in under.items()}}
    if args.json:
        print(json.dumps(out))
        return
    if stop is not None:
        print(f"stopped ({stop_reason(stop)}) after {len(games)} of {args.games} games; "
              f"the figures below are of those {len(games)}")
    if not games:
        return
    if len(games) <= 10:
        for i, gm in enumerate(games):
            parts = [f"{gm.moves} moves"]
            if base.score:
                parts.append(f"scores {list(gm.scores)}")
            if base.win:
                parts.append(f"winner(s) {list(gm.winners)}")
            print(f"game {i + 1}: {'; '.join(parts)}")
    if len(games) > 1:
        print("\n".join(_summary_lines(g.name, args.seed, out["summary"], players)))
    if under:
        print(f"\nreading {args.compare}, the same {len(games)} games (seeds) under each "
              f"option; 'winner changed' counts the games whose winners differ from "
              f"{chosen}'s:")
        rows = [(f"{chosen} (played above)", out["summary"], None)] + \
            [(opt, o["summary"], o["winner_changed"])
             for opt, o in out["compare"]["options"].items()]
        width = max(len(r[0]) for r in rows)
        for name, sm, ch in rows:
            parts = [f"mean length {sm['length']['mean']:g}"]
            if "win_rate" in sm:
                parts.append("win rate " + " ".join(f"{100 * w:.0f}%" for w in sm["win_rate"]))
            if "score_mean" in sm:
                parts.append("mean score " + " ".join(f"{m:g}" for m in sm["score_mean"]))
            if ch is not None and base.win:
                parts.append(f"winner changed in {ch} of {len(games)} "
                             f"({100 * ch / len(games):.0f}%)")
            print(f"  {name:<{width}}  " + "; ".join(parts))
    if not base.win:
        print(f"({g.name} declares no `def winner`: no winners to show)")
    print(f"({len(games)} game(s) in {dt:.2f} s, {len(games) / dt:.1f} games/s)")


def _summary_lines(name: str, seed: int, sm: dict, players: int) -> list[str]:
    """The summary of many games as a table by seat, then the game length."""
    lines = [f"{name}: {sm['games']} games of seed {seed}"]
    cols = ["player"] + (["wins", "win rate"] if "wins" in sm else []) + \
        (["mean score", "sd"] if "score_mean" in sm else [])
    if len(cols) > 1:
        lines.append("  " + "  ".join(f"{c:>10}" for c in cols))
        for p in range(players):
            row = [str(p)]
            if "wins" in sm:
                row += [str(sm["wins"][p]), f"{100 * sm['win_rate'][p]:.1f}%"]
            if "score_mean" in sm:
                row += [f"{sm['score_mean'][p]:g}", f"{sm['score_sd'][p]:g}"]
            lines.append("  " + "  ".join(f"{c:>10}" for c in row))
        if "wins" in sm:
            lines.append("  (a game with several winners counts as a win for each"
                         + (f"; {sm['no_winner']} game(s) without a winner" if sm["no_winner"]
                            else "") + ")")
    ln = sm["length"]
    lines.append(f"  length: mean {ln['mean']:g} moves, sd {ln['sd']:g}, least {ln['min']}, "
                 f"most {ln['max']}")
    return lines
