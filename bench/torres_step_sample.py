"""Torres' inductive step, sampled on the 8 x 8 board (docs/prover.md, Torres).

`rulebook prove` shows every invariant of Torres inductive on a 3 x 3 board, and all but two
on 8 x 8: `height_within_area` and `castles_never_merge` need what a flood computes, which
z3 does not reach on 8 x 8.  This asks the same question of the interpreter, on samples: a
state that satisfies every invariant (not only a reachable one), then every legal move from
it, and every invariant (and transition property) after the move.  A broken one is a
counterexample to induction on the game's own board, the kind `rulebook prove` finds on a
small one.

A state is a mid-game position of a seeded playout (its pieces, turn, track, stacks), with
the board's blocks replaced by random castles (blobs, each column no taller than its
castle's area, one as tall as that often, since a tight column is where the rules bite) and
the reserve set so that no block is created.  The player to move holds one of each action
card, 5 AP, an unplayed card and a stack in hand, so that every block action (`place`, the
cards that add, slide under or move a block) is tried.  Not a proof: samples.

    python bench/torres_step_sample.py --states 200 [--seed 1] [--spec FILE] [--json]

``--spec`` samples another rules file (a copy of spec/torres.rules with a rule taken out,
say), to see the sampler find the counterexample.  Exit status 1 when a move breaks an
invariant (the move and the state are printed), 2 on a rules file that does not compile or is
not Torres', 0 otherwise.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver.lang.errors import InputError, RulebookError  # noqa: E402
from solver.engine.game import Game, load_game, load_path  # noqa: E402
from solver.lang.types import finite  # noqa: E402
from torres import play_until  # noqa: E402  (bench/torres.py, beside this file)

BLOCKS = 92


def mid_game(g: Game, rng: random.Random):
    """A position of a seeded random playout in phase 2, a player to move in the playing
    stage."""
    fi = g.field_index
    stage = g.p.state[fi["stage"]].type.members
    while True:
        st = play_until(g, rng, lambda st: st[fi["phase"]] == 2
                        and stage[st[fi["stage"]]] == "playing", 3000)
        if st is not None:
            return st


def _castles(squares: list, built: list) -> list[list[int]]:
    """The built squares' orthogonally connected groups, by index (a plain flood, apart from
    the spec's own)."""
    at = {s: i for i, s in enumerate(squares)}
    seen = [False] * len(squares)
    out = []
    for i in range(len(squares)):
        if not built[i] or seen[i]:
            continue
        seen[i], todo, group = True, [i], []
        while todo:
            j = todo.pop()
            group.append(j)
            x, y = squares[j]
            for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                k = at.get(n)
                if k is not None and built[k] and not seen[k]:
                    seen[k] = True
                    todo.append(k)
        out.append(group)
    return out


def random_state(g: Game, base: tuple, rng: random.Random):
    """``base`` with random castles on the board, or None when they take more blocks than
    the reserve holds."""
    fi = g.field_index
    squares = [tuple(s) for s in finite(g.p.types["Sq"]).values]
    at = {s: i for i, s in enumerate(squares)}
    built = [False] * len(squares)
    for _ in range(rng.randint(6, 14)):
        i = rng.randrange(len(squares))
        built[i] = True
        for _ in range(rng.randint(0, 5)):
            x, y = squares[i]
            i = rng.choice([at[n] for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))
                            if n in at])
            built[i] = True
    height = [0] * len(squares)
    for group in _castles(squares, built):
        top = min(len(group), 16)
        for j in group:
            height[j] = rng.randint(1, top)
        if rng.random() < 0.6:
            height[rng.choice(group)] = top
    st = list(base)
    st[fi["height"]] = tuple(height)
    turn, hand = st[fi["turn"]], rng.randint(0, 3)
    st[fi["hand"]], st[fi["taken"]] = hand, True
    st[fi["ap"]], st[fi["played_card"]] = 5, False
    cards = [list(c) for c in st[fi["cards"]]]
    cards[turn] = [max(n, 1) for n in cards[turn]]
    st[fi["cards"]] = tuple(tuple(c) for c in cards)
    stacked = sum(k * (j + 1) for per in st[fi["stacks"]] for j, k in enumerate(per))
    st[fi["reserve"]] = BLOCKS - sum(height) - stacked - hand
    return tuple(st) if st[fi["reserve"]] >= 0 else None


def sample(g: Game, states: int, seed: int, progress=None) -> dict:
    """Sample the inductive step: ``states`` random states satisfying every invariant, each
    legal move from them.  The figures, with ``broken`` (the first move that breaks an
    invariant: its name, the move, the state before) or None."""
    rng = random.Random(seed)
    invs = [i for i in g.p.invariants if not i.transition]
    trans = [i for i in g.p.invariants if i.transition]
    per_action: dict[str, int] = {}
    done = moves = drawn = 0
    base = None
    t0 = time.perf_counter()
    while done < states:
        if done % 10 == 0 and (base is None or drawn):
            base, drawn = mid_game(g, rng), 0
        st = random_state(g, base, rng)
        if st is None:
            continue
        drawn += 1
        off = [i.name for i in invs if not g.holds(i, st)]
        if off:
            raise AssertionError(f"a sampled state breaks {', '.join(off)}: the sampler is wrong")
        done += 1
        for m, after, _ in g.legal(st):
            moves += 1
            per_action[m.action] = per_action.get(m.action, 0) + 1
            bad = [i.name for i in invs if not g.holds(i, after)]
            bad += [i.name for i in trans if not g.holds(i, after, old=st)]
            if bad:
                return {"states": done, "moves": moves, "per_action": per_action,
                        "broken": {"invariants": bad, "move": m.to_json(g),
                                   "before": _board(g, st)},
                        "seconds": round(time.perf_counter() - t0, 1)}
        if progress is not None and done % 10 == 0:
            progress(f"{done}/{states} states, {moves} moves, {time.perf_counter() - t0:.0f} s")
    return {"states": done, "moves": moves, "per_action": dict(sorted(per_action.items())),
            "broken": None, "seconds": round(time.perf_counter() - t0, 1)}


def _board(g: Game, st) -> dict:
    """The state's board, rows y = 0.., as heights and occupants."""
    fi = g.field_index
    squares = [tuple(s) for s in finite(g.p.types["Sq"]).values]
    w = 1 + max(x for x, _ in squares)
    h = 1 + max(y for _, y in squares)
    at = {s: i for i, s in enumerate(squares)}
    occ = g.p.state[fi["occupant"]].type.val.members
    return {"height": [[st[fi["height"]][at[(x, y)]] for x in range(w)] for y in range(h)],
            "occupant": [[occ[st[fi["occupant"]][at[(x, y)]]] for x in range(w)]
                         for y in range(h)]}


def _piece(o: str) -> str:
    """An occupant in one character: '.' none, 'K' the king, a knight by its player."""
    return "." if o == "empty" else "K" if o == "king" else o[-1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=100, help="sampled states (100)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (1)")
    ap.add_argument("--spec", help="a rules file to sample instead of spec/torres.rules")
    ap.add_argument("--json", action="store_true", help="the figures as JSON")
    args = ap.parse_args(argv)
    params = (("players", 4),)
    try:
        g = load_path(args.spec, (), params) if args.spec else load_game("torres", (), params)
        missing = sorted({"height", "occupant", "turn", "hand", "taken", "ap", "played_card",
                          "cards", "stacks", "reserve", "phase", "stage"} - set(g.field_index))
        if missing:
            raise InputError(f"{args.spec}: not a Torres spec: no state field "
                             f"{', '.join(missing)}")
        res = sample(g, args.states, args.seed,
                     None if args.json else lambda m: print(f"  .. {m}", file=sys.stderr,
                                                            flush=True))
    except RulebookError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        acts = ", ".join(f"{a} {n}" for a, n in sorted(res["per_action"].items()))
        print(f"{res['states']} states, {res['moves']} moves ({acts}), {res['seconds']} s")
        if res["broken"] is None:
            print("no move broke an invariant")
        else:
            b = res["broken"]
            print(f"{b['move']} breaks {', '.join(b['invariants'])} from:")
            for hs, os in zip(b["before"]["height"], b["before"]["occupant"]):
                print("  " + " ".join(f"{x:2d}{_piece(o)}" for x, o in zip(hs, os)))
    return 1 if res["broken"] else 0


if __name__ == "__main__":
    sys.exit(main())
