"""A plain brute force for the Les 5 Tours `build` puzzle, for `make bench` (issue 65) to compare
the engine with.  It imports nothing of the engine: it applies the rulebook's rules
(/work/shared/rules/les-5-tours.fr.txt, "Les Tours", "2) Phase de construction", "Fin de la
partie") as spec/les-5-tours.rules states them, under the default readings
(`demolition_order = before`, `main_tower = one`), by trying every order:

  - at most one demolition, before the first card is built: the top card of a non-empty tower
    that is not a 0 goes onto the demolition pile;
  - then the cards one after another, each on the tower of its style: nothing on a 0; a card
    goes on an empty tower, on an 8, is a 9, or is lower than the top card;
  - the score: per tower, 1 point a card, 2 if it holds a 0; the tallest tower's cards once
    more; minus 1 + 2 + ... + n for n demolished cards.

`feasible`: some demolition choice and order of the hand builds it all; `best_score`: the best
score after such a build (None when there is none); `max_take`: the most market cards that
some demolition choice and order builds one after another (the longest buildable prefix over
every order of the market).
"""
from __future__ import annotations

from itertools import permutations

STYLES = ("candy", "scary", "tree", "scrap", "sand")


def fits(tower: list[int], v: int) -> bool:
    if not tower:
        return True
    top = tower[-1]
    return top != 0 and (top == 8 or v == 9 or v < top)


def score(towers: dict[str, list[int]], demolished: int) -> int:
    pts = sum(2 * len(t) if 0 in t else len(t) for t in towers.values())
    return pts + max((len(t) for t in towers.values()), default=0) \
        - demolished * (demolished + 1) // 2


def starts(towers: dict, demolished: int):
    """The positions after the optional demolition: (towers, size of the pile)."""
    yield {s: list(t) for s, t in towers.items()}, demolished
    for s, t in towers.items():
        if t and t[-1] != 0:
            yield {**{k: list(v) for k, v in towers.items()}, s: t[:-1]}, demolished + 1


def built(towers: dict, cards) -> int:
    """How many of ``cards`` (in this order) can be built one after another; the towers are
    built on in place."""
    n = 0
    for style, v in cards:
        if not fits(towers[style], v):
            break
        towers[style].append(v)
        n += 1
    return n


def solve(puzzle: dict) -> dict:
    """The answers to a `build` puzzle in the bench's JSON (towers, demolished, hand, market)."""
    towers = {s: list(puzzle.get("towers", {}).get(s, [])) for s in STYLES}
    pile = len(puzzle.get("demolished", []))
    hand = [tuple(c) for c in puzzle.get("hand", [])]
    market = [tuple(c) for c in puzzle.get("market", [])]
    best = None
    for start, n in starts(towers, pile):
        for order in set(permutations(hand)):
            t = {s: list(v) for s, v in start.items()}
            if built(t, order) == len(hand):
                sc = score(t, n)
                best = sc if best is None or sc > best else best
    out = {"feasible": best is not None, "best_score": best}
    if market:
        take = 0
        for start, _ in starts(towers, pile):
            for order in set(permutations(market)):
                take = max(take, built({s: list(v) for s, v in start.items()}, order))
        out["max_take"] = take
    return out
