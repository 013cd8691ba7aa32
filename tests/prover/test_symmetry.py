"""`rulebook prove --symmetry`: a path that is the mirror image of an earlier one follows from
it when z3 shows so (solver/prover/symmetry.py).  The same verdicts with fewer paths proved; a rule
that treats one side of the board apart is not mirrored away."""
from __future__ import annotations

import pytest

from conftest import FIXTURES
from solver.engine import regions
from solver.engine.game import load_path
from solver.prover.options import ProveOptions
from solver.prover.prove import prove
from solver.prover.symmetry import grid_of, permutations

TIMEOUT_MS = 60_000


@pytest.fixture(autouse=True)
def mirror_cheap_paths(monkeypatch):
    """The fixture's paths are proved in milliseconds, which the prover would rather prove
    than mirror (MIRROR_MIN_S), its checks costing more than those proofs (MIRROR_SPEND):
    here every image is mirrored."""
    from solver.prover import orbits
    monkeypatch.setattr(orbits, "MIRROR_MIN_S", 0.0)
    monkeypatch.setattr(orbits, "MIRROR_SPEND", float("inf"))


def _run(game, **kw):
    said: list[str] = []
    got = {r.name: r.status for r in prove(game, ProveOptions(1, TIMEOUT_MS, **kw),
                                           progress=said.append)}
    return got, said


def _followed(said: list[str]) -> int:
    """How many paths the progress says followed by a symmetry."""
    return sum(int(m.split(": ", 1)[1].split(" of ")[0]) for m in said
               if "follow by a symmetry" in m)


@pytest.mark.parametrize("w,h,n", [(3, 3, 7), (4, 4, 7), (3, 2, 3), (2, 5, 3)])
def test_the_symmetries_of_a_grid_keep_neighbours(w, h, n, tmp_path):
    text = (FIXTURES / "regions.rules").read_text().replace(
        "y: 0..(w - 1) }", f"y: 0..{h - 1} }}").replace("param w: 3..5 = 3;",
                                                      f"param w: 2..5 = {w};")
    p = tmp_path / "grid.rules"
    p.write_text(text)
    grid, why = grid_of(load_path(p))
    assert why == ""
    perms = permutations(grid)
    assert len(perms) == n
    nb = regions.neighbours(grid)
    for _, perm in perms:
        assert sorted(perm) == list(range(w * h)) and perm != tuple(range(w * h))
        for i in range(w * h):
            assert sorted(perm[j] for j in nb[i]) == sorted(nb[perm[i]])


def test_the_castles_are_proved_with_most_paths_mirrored():
    game = load_path(FIXTURES / "regions.rules")
    plain, _ = _run(game, region_facts=True)
    mirrored, said = _run(game, region_facts=True, symmetric=True)
    assert plain == mirrored == {"low": "inductive", "apart": "inductive"}
    # 9 squares, 2 actions: of each action's 9 paths, the 3 orbits' first are proved.
    assert _followed(said) == 2 * 2 * (9 - 3)


def test_a_rule_for_one_side_of_the_board_is_not_mirrored_away(tmp_path):
    """A column on the board's last column may outgrow its castle: the first path of each
    orbit (column 0) is proved, and its mirror image (column 2) must not follow from it."""
    text = (FIXTURES / "regions.rules").read_text()
    one_side = text.replace("height[s] + 1 <= area_with(s);",
                            "height[s] + 1 <= area_with(s) or s.x == 2;")
    assert one_side != text
    p = tmp_path / "one_side.rules"
    p.write_text(one_side)
    game = load_path(p)
    plain, _ = _run(game, region_facts=True)
    mirrored, said = _run(game, region_facts=True, symmetric=True)
    assert plain["low"] != "inductive"
    assert mirrored == plain
    assert _followed(said) > 0          # the paths of column 1 and those of `lower` still do


def test_a_journal_keeps_the_mirrored_paths(tmp_path):
    """The paths settled by a symmetry are recorded as checked, with the symmetry and the
    path they follow from, and a resumed run (with or without --symmetry) builds no case
    again."""
    import json
    game = load_path(FIXTURES / "regions.rules")
    log = tmp_path / "journal.jsonl"
    first, _ = _run(game, region_facts=True, symmetric=True, journal=str(log))
    records = [json.loads(line) for line in log.read_text().splitlines()]
    by = [r["by"] for r in records if "by" in r]
    assert len(by) == 24 and all(" of path " in b for b in by)
    # A proved path says how long it took (what a resumed run judges an action's cost by).
    proved = [r for r in records if "fell" in r and "by" not in r]
    assert proved and all(r["seconds"] >= 0 for r in proved)
    again, said = _run(game, region_facts=True, journal=str(log))
    assert again == first == {"low": "inductive", "apart": "inductive"}
    assert not any("action paths" in m for m in said)


def test_forgetting_the_images_changes_nothing(monkeypatch):
    """With the cache of images emptied every few terms, the same paths follow."""
    from solver.prover import symmetry
    monkeypatch.setattr(symmetry, "CACHE_TERMS", 5)
    got, said = _run(load_path(FIXTURES / "regions.rules"), region_facts=True, symmetric=True)
    assert got == {"low": "inductive", "apart": "inductive"}
    assert _followed(said) == 2 * 2 * (9 - 3)


def test_an_action_proved_in_milliseconds_is_not_mirrored(monkeypatch):
    """Below MIRROR_MIN_S a path's orbit-first, its images are proved as well: a symmetry
    check would cost more.  The transition pass too, by what its own paths took (it had no
    timing: on Torres 3x3 it spent 31 s showing that 827 images followed, each proved in a
    few milliseconds)."""
    from solver.prover import orbits
    monkeypatch.setattr(orbits, "MIRROR_MIN_S", 60.0)
    got, said = _run(load_path(FIXTURES / "regions.rules"), region_facts=True, symmetric=True)
    assert got == {"low": "inductive", "apart": "inductive"}
    assert _followed([m for m in said if m.startswith("induction")]) == 0
    assert _followed([m for m in said if m.startswith("transitions")]) == 0
    assert any(m.startswith("transitions: 0 of 12 paths follow") for m in said)


def test_a_flood_read_as_unknowns_is_mirrored_too():
    """`--opaque-fix` reads the walk's flood as uninterpreted functions of what it reads (the
    squares walked from and to, the pieces); a proof holds for every such function, so for
    the mirrored ones: a flood's image is the family's function applied to the mirrored
    inputs.  Once `corner` (not symmetric under every symmetry) has fallen, every image
    follows; the same verdicts as without `--symmetry`."""
    game = load_path(FIXTURES / "walk.rules")
    plain, _ = _run(game, opaque_fix=True)
    mirrored, said = _run(game, opaque_fix=True, symmetric=True)
    assert plain == mirrored == {"two": "inductive", "corner": "holds"}
    rounds = [m for m in said if m.startswith("induction") and "follow by a symmetry" in m]
    # 81 paths (a piece's square, the square it walks to) in 15 orbits.
    assert rounds[-1].startswith("induction: 66 of 66 paths follow")


def test_a_flood_input_s_squares_and_tables_are_mirrored():
    """A flood's inputs on the mirrored board: a square is moved (σ's square), a table over
    the grid has at square σ(i) what it had at i, and the value's leaf for square i is the
    one for σ(i)."""
    import z3
    from solver.engine import domains as dz
    from solver.prover.symmetry import group
    from solver.lang.types import BoolT, MapT, finite
    game = load_path(FIXTURES / "walk.rules")
    S = dz.Fresh("t_").value(game.state_type, "s")
    syms, why = group(game, S)
    assert why == "" and len(syms) == 7
    grid = syms[0].grid
    fin = finite(grid)
    table = MapT(grid, BoolT())
    for sym in syms:
        for i, (x, y) in enumerate(fin.values):
            moved = sym._value(grid, [z3.IntVal(x), z3.IntVal(y)])
            assert fin.index[tuple(v.as_long() for v in moved)] == sym.perm[i]
            assert sym._leaf(table, i) == sym.perm[i]
        leaves = [z3.Bool(f"b{i}") for i in range(len(fin.values))]
        out = sym._value(table, leaves)
        assert [out[sym.perm[i]] for i in range(len(leaves))] == leaves


ROTATED = "the players numbered anew"


def _one_player(tmp_path, fixture: str, rule: str, instead: str):
    """The fixture with ``rule`` written ``instead`` (a rule for one player), loaded."""
    text = (FIXTURES / fixture).read_text()
    one = text.replace(rule, instead)
    assert one != text
    p = tmp_path / "one_player.rules"
    p.write_text(one)
    return load_path(p)


def test_the_players_numbered_anew_settle_the_other_cases():
    """`rotate Player(mine): turn, left;`: each path of the cases where player 1 or 2 is to
    move follows from the first case's path of the same action and square, the players
    numbered from the actor; the same verdict as without `--symmetry`."""
    game = load_path(FIXTURES / "turns.rules")
    plain, _ = _run(game)
    mirrored, said = _run(game, symmetric=True)
    assert plain == mirrored == {"kept": "inductive"}
    assert [m.split(": ", 1)[1].split(" (")[0] for m in said if ROTATED in m] == [
        f"5 of 5 paths follow by a symmetry from the first case's, {ROTATED}"] * 2


def test_a_flood_read_as_unknowns_is_rotated_too():
    """`--opaque-fix` reads the roam's flood as uninterpreted functions of the board; a proof
    holds for every function, so for the one that numbers the pieces on the board forward
    before it floods: the rotated image of player 0's flood is player r's own flood, and
    every path of the other cases follows from the first case's (without that, 1 of 36), in
    the invariants' pass and the transition properties' alike."""
    game = load_path(FIXTURES / "roam.rules")
    plain, _ = _run(game, opaque_fix=True)
    mirrored, said = _run(game, opaque_fix=True, symmetric=True)
    assert plain == mirrored == {"one_each": "inductive", "all_stay": "inductive"}
    assert [m.split(" (")[0] for m in said if ROTATED in m] == [
        f"{key}: 36 of 36 paths follow by a symmetry from the first case's, {ROTATED}"
        for key in ("induction", "induction", "transitions", "transitions")]


def test_a_flood_path_for_one_player_is_not_rotated_away(tmp_path):
    """Player 2's walk leaves its piece behind: `one_each` is not inductive, and player 2's
    walks, floods and all, are not all settled from player 0's."""
    game = _one_player(tmp_path, "roam.rules", "  board[a] = none;",
                       "  if turn != 2 { board[a] = none; }")
    plain, _ = _run(game, opaque_fix=True)
    mirrored, said = _run(game, opaque_fix=True, symmetric=True)
    assert plain == mirrored and plain["one_each"] != "inductive"
    rotated = [m for m in said if m.startswith("induction") and ROTATED in m]
    assert rotated[0].startswith("induction: 36 of 36 paths")
    assert not rotated[1].startswith("induction: 36 of 36 paths")


def test_a_resumed_transition_pass_rotates_from_the_first_case_done_before(tmp_path):
    """A run stopped after the transition properties' first case resumes from the journal:
    the first case is built again only to rotate from, and the other cases' paths follow
    from it."""
    import json
    game = load_path(FIXTURES / "roam.rules")
    log = tmp_path / "journal.jsonl"
    first, _ = _run(game, opaque_fix=True, symmetric=True, journal=str(log))
    lines = log.read_text().splitlines()
    cut = next(k for k, x in enumerate(lines) if json.loads(x).get("kind") == "transition-case")
    log.write_text("\n".join(lines[:cut + 1]) + "\n")
    again, said = _run(game, opaque_fix=True, symmetric=True, journal=str(log))
    assert again == first == {"one_each": "inductive", "all_stay": "inductive"}
    assert "transitions: case 1 of 3: every path held in a previous run" in " ".join(said)
    records = [json.loads(x) for x in log.read_text().splitlines()[cut + 1:]]
    by = [r["by"] for r in records if r.get("kind") == "transition"]
    assert len(by) == 2 * 36 and all(" of case 1 path " in b for b in by)


def test_a_rule_for_one_player_is_not_rotated_away(tmp_path):
    """Player 2 keeps the pieces it puts: `kept` is not inductive, and the paths of player
    2's case do not follow from player 0's (the `pass` path still does)."""
    game = _one_player(tmp_path, "turns.rules", "  left[turn] -= 1;",
                       "  if turn != 2 { left[turn] -= 1; }")
    plain, _ = _run(game)
    mirrored, said = _run(game, symmetric=True)
    assert plain == mirrored and plain["kept"] != "inductive"
    rotated = [m for m in said if ROTATED in m]
    assert rotated[0].startswith("induction: 5 of 5 paths")
    assert rotated[1].startswith("induction: 1 of 5 paths")


def test_a_journal_names_the_case_a_rotated_path_follows_from(tmp_path):
    """A path settled by the players' rotation is recorded with the first case's path it
    follows from; a resumed run builds no case again."""
    import json
    game = load_path(FIXTURES / "turns.rules")
    log = tmp_path / "journal.jsonl"
    first, _ = _run(game, symmetric=True, journal=str(log))
    records = [json.loads(line) for line in log.read_text().splitlines()]
    by = [r["by"] for r in records if " of case 1 path " in r.get("by", "")]
    assert len(by) == 10 and all(b.startswith("players' rotation by ") for b in by)
    again, said = _run(game, journal=str(log))
    assert again == first == {"kept": "inductive"}
    assert not any("action paths" in m for m in said)


def test_a_path_that_hands_the_turn_on_follows_from_the_one_to_the_same_player(tmp_path):
    """`hand_over` gives the turn to the player the state names: the step splits it by that
    player (0, 1, 2 in every case), and player r's path to player q follows from player 0's
    path to q - r, not from its path of the same rank."""
    text = (FIXTURES / "handover.rules").read_text() + (
        "\nenum Seat { s0, s1, s2 }\n"
        "def seat(p: Player): Seat = if p == 0 then s0 else if p == 1 then s1 else s2;\n"
        "rotate Player(seat): turn, next_up, held;\n")
    p = tmp_path / "handover.rules"
    p.write_text(text)
    game = load_path(p)
    plain, _ = _run(game)
    mirrored, said = _run(game, symmetric=True)
    assert plain == mirrored == {"holder": "inductive"}
    assert [m.split(": ", 1)[1].split(" paths")[0] for m in said if ROTATED in m] == \
        ["6 of 6"] * 2


def test_an_action_whose_checks_cost_more_than_its_proofs_is_proved(monkeypatch):
    """After MIRROR_MISSES of its images were checked, an action whose checks have cost more
    a settled path than proving one does (its mean in ``costs``) is no longer mirrored,
    whether its images missed or followed slowly (on Torres 3x3 a slow run mirrored an action
    whose images followed at 1.7 s each, its proofs 0.45 s: the proof took twice as long);
    one whose checks cost less is mirrored throughout; one with no such figure is while more
    of its images missed than followed, not while most follow."""
    import time
    from types import SimpleNamespace

    import z3
    from solver.prover import orbits
    from solver.prover.orbits import MIRROR_MISSES, mirrored as _mirrored
    monkeypatch.setattr(orbits, "MIRROR_SPEND", 1.0)
    calls: list[str] = []

    followed = [1]          # how many first images follow; the others do not

    class Sym:
        name = "a mirror"

        def follows(self, *args):
            calls.append("check")
            time.sleep(0.01)
            return len(calls) <= followed[0]

    sym = Sym()
    symmetric = SimpleNamespace(holds_of=lambda *a: True)
    path = SimpleNamespace(action="slow", guard=z3.BoolVal(True))
    work = {0: (path, [z3.Bool("g")])}
    later = [(at, (path, [z3.Bool("g")])) for at in range(1, 11)]
    orbs = {at: [(0, sym)] for at in range(1, 11)}

    def run(costs):
        calls.clear()
        return _mirrored(symmetric, ("induction", 0), work, later, orbs, [], [], None,
                         lambda m: None, costs)
    # Checks of 10 ms each against proofs of 1 ms: MIRROR_MISSES tried, the rest proved.
    assert run({"slow": 0.001}) == list(range(2, 11)) and len(calls) == MIRROR_MISSES
    followed[0] = 10
    assert run({"slow": 0.001}) == list(range(MIRROR_MISSES + 1, 11))
    assert len(calls) == MIRROR_MISSES
    # Against proofs of 1 s, every image is checked, and all follow.
    assert run({"slow": 1.0}) == [] and len(calls) == 10
    followed[0] = 1
    assert run({"slow": 1.0}) == list(range(2, 11)) and len(calls) == 10
    # No figure: until more images missed than followed.
    assert run({}) == list(range(2, 11)) and len(calls) == 1 + MIRROR_MISSES
    followed[0] = 5
    assert run({}) == list(range(6, 11)) and len(calls) == 10
