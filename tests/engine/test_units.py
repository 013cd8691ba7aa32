"""`terminal` and `actor` are expressions like any other: a `let` or a call of a def with
parameters takes local slots, and evaluating them gets a frame of that size (the fuzzing found
Towers' `actor: if phase == choose then next(turn) else turn` raising an IndexError)."""
from __future__ import annotations

from solver.engine.game import load_game, load_path

RULES = '''game "units";
param players: 2..4 = 3;
type Player = 0..(players - 1);
state { n: 0..9; turn: Player; }
def next(p: Player): Player = (p + 1) % players;
def over(k: 0..9): bool = let m = k + 1 in m > 4;
actor: let t = next(turn) in next(t);
terminal: over(n);
action inc() { requires small: n < 9; n += 1; turn = next(turn); }
'''


def test_terminal_and_actor_with_lets_and_calls(tmp_path):
    path = tmp_path / "units.rules"
    path.write_text(RULES)
    g = load_path(path)
    st = g.initial()
    i, t = g.field_index["n"], g.field_index["turn"]
    assert g.actor(st) == 2 and not g.is_terminal(st)
    st = tuple(4 if k == i else 1 if k == t else v for k, v in enumerate(st))
    assert g.actor(st) == 0 and g.is_terminal(st)


def test_towers_actor_while_choosing():
    g = load_game("towers")
    st = g.state_from_json({"turns_left": 1, "reserve": [], "phase": "choose"}, "state")
    assert g.actor(st) == 1
    st = g.state_from_json({"turns_left": 1, "phase": "roll"}, "state")
    assert g.actor(st) == 0
