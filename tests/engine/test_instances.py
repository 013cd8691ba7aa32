"""The interpreter's candidate draws: the products of fixed domains built once give the tuples
the general enumeration gives, in its order, and a random move drawn lazily among thousands of
candidates is the one drawn from the whole list (same random calls, same pick)."""
from __future__ import annotations

import random

import pytest

from solver.engine.game import load_game
from solver.engine.instances import Shuffle


def test_shuffle_takes_as_the_list_would():
    rng = random.Random(5)
    for trial in range(200):
        groups = [(f"a{g}", [(g, j) for j in range(rng.randrange(0, 40))])
                  for g in range(rng.randrange(1, 6))]
        flat = [(a, p) for a, ps in groups for p in ps]
        lazy = Shuffle(groups)
        n = len(flat)
        seen = []
        while n:
            i = rng.randrange(n)
            n -= 1
            want = flat[i]
            flat[i] = flat[n]
            got = lazy.take(i, n)
            assert got == want, (trial, i, n)
            seen.append(got)
        # every candidate drawn exactly once
        assert sorted(seen, key=repr) == sorted(((a, p) for a, ps in groups for p in ps),
                                                key=repr)


def _general(action, st):
    """The parameter tuples by nested loops over the compiled domains, first outermost."""
    env = [None] * action.frame
    out = []

    def rec(i, acc):
        if i == len(action.domains):
            out.append(tuple(acc))
            return
        slot, fd = action.domains[i]
        for _, v in fd(st, env):
            env[slot] = v
            rec(i + 1, acc + [v])
    rec(0, [])
    return out


@pytest.mark.parametrize("name,params", [("torres", (("players", 4),)),
                                         ("towers", (("players", 2),)),
                                         ("les-5-tours", (("players", 4),))])
def test_fixed_products_in_enumeration_order(name, params):
    g = load_game(name, (), params)
    st = g.initial()
    fixed = [a for a in g.actions if a.fixed is not None]
    assert fixed
    if name != "les-5-tours":   # the board games have actions over pairs of squares/cells
        assert any(len(a.domains) > 1 and len(a.fixed) > 1000 for a in fixed)
    for a in fixed:
        assert list(a.fixed) == _general(a, st), a.name
        assert a.instances(st) == list(a.fixed)


def _reference_pick(g, st, rng, actions):
    """A uniform pick by rejection over the whole candidate list, legality from `Game.legal`."""
    legal = {(m.action, m.params): st2 for m, st2, _ in g.legal(st)}
    cands = [(a, p) for a in actions if a.is_open(st) for p in a.instances(st)]
    n = len(cands)
    while n:
        i = rng.randrange(n)
        n -= 1
        a, p = cands[i]
        cands[i] = cands[n]
        if (a.name, p) in legal:
            return a.name, p, legal[a.name, p]
    return None


@pytest.mark.parametrize("name,params,seed,steps", [("torres", (("players", 4),), 3, 60),
                                                    ("towers", (("players", 2),), 4, 24)])
def test_lazy_draw_picks_the_reference_move(name, params, seed, steps):
    g = load_game(name, (), params)
    chance = [a for a in g.actions if a.chance]
    player = [a for a in g.actions if not a.chance]
    rng = random.Random(seed)
    st = g.initial()
    checked = long = 0
    for _ in range(steps):
        if g.is_terminal(st):
            break
        picked = g.pick(st, random.Random(rng.random()), chance, True)
        if picked is None:
            state = rng.random()
            got = g.pick(st, random.Random(state), player, False)
            want = _reference_pick(g, st, random.Random(state), player)
            assert (got[0].action, got[0].params, got[1]) == want
            checked += 1
            long += sum(len(a.instances(st)) for a in player if a.is_open(st)) > 64
            picked = got
        st = picked[1]
    assert checked >= 8 and long >= 5


def test_a_random_subclass_draws_the_same_moves():
    """The draw inlines `randrange` for a plain `random.Random` (solver/engine/draws.py); a
    subclass, which may redefine it, is called instead: one that redefines nothing in effect
    plays the same moves, and its `randrange` is the one called."""
    class Counting(random.Random):
        calls = 0

        def randrange(self, *args):
            Counting.calls += 1
            return super().randrange(*args)

    g = load_game("torres", (), (("players", 4),))
    chance = [a for a in g.actions if a.chance]
    player = [a for a in g.actions if not a.chance]
    plain, counting = random.Random(11), Counting(11)
    st1 = st2 = g.initial()
    for _ in range(60):
        if g.is_terminal(st1):
            break
        p1 = g.pick(st1, plain, chance, True) or g.pick(st1, plain, player, False)
        p2 = g.pick(st2, counting, chance, True) or g.pick(st2, counting, player, False)
        assert p1[0] == p2[0]
        st1, st2 = p1[1], p2[1]
    assert st1 == st2 and Counting.calls > 60


@pytest.mark.parametrize("name,params", [("torres", (("players", 4),)),
                                         ("torres-advanced", (("players", 3),))])
def test_first_verdicts_in_one_pass_are_the_first_checks(name, params):
    """A first check `F[p] == e` is decided for every first value at once from the field's
    entries (draws.first_column): along a seeded game, each of those verdicts is the check's
    own value for that first parameter."""
    g = load_game(name, (), params)
    cols = [a for a in g.actions if a.first_column is not None]
    assert any(a.name == "move" for a in cols)
    chance = [a for a in g.actions if a.chance]
    player = [a for a in g.actions if not a.chance]
    rng = random.Random(21)
    st = g.initial()
    passed = failed = 0
    for _ in range(50):
        if g.is_terminal(st):
            break
        for a in cols:
            field, value, negated, index = a.first_column
            e = value(st, [None] * a.frame)
            for x in dict.fromkeys(p[0] for p in a.fixed):
                env = [None] * a.frame
                env[a.domains[0][0]] = x
                want = bool(a.first_test(st, env))
                assert ((st[field][index[x]] == e) != negated) == want, (a.name, x)
                passed += want
                failed += not want
        picked = g.pick(st, rng, chance, True) or g.pick(st, rng, player, False)
        st = picked[1]
    assert passed and failed


def test_kept_static_verdicts_are_the_checks_own():
    """The requires after a first check that read no other field (Towers' `space`) are
    decided per candidate and kept per value of those fields (draws.static_prefix): along a
    seeded game, every verdict kept for the state's values is what the first check and those
    requires say of that candidate in the state, and the draws still pick the reference
    move."""
    from solver.engine.draws import FAILS, PASSES, POSITIONS
    g = load_game("towers", (), (("players", 2),))
    place = g.action("place")
    assert place.static_test is not None
    assert all(a.static_test is None for a in load_game("torres", (), (("players", 4),)).actions)
    chance = [a for a in g.actions if a.chance]
    player = [a for a in g.actions if not a.chance]
    rng = random.Random(8)
    st = g.initial()
    verdicts = {PASSES: 0, FAILS: 0}
    for _ in range(40):
        if g.is_terminal(st):
            break
        picked = g.pick(st, random.Random(rng.random()), chance, True)
        if picked is None:
            state = rng.random()
            picked = g.pick(st, random.Random(state), player, False)
            assert (picked[0].action, picked[0].params, picked[1]) == \
                _reference_pick(g, st, random.Random(state), player)
            for op in g._openers.values():
                dm = op.cache.firsts.get(place)
                kept = None if dm is None else dm.switch(st).get(POSITIONS)
                for k, v in enumerate(kept or ()):
                    if not v:
                        continue
                    env = [None] * place.frame
                    for slot, x in zip(place.slots, place.fixed[k]):
                        env[slot] = x
                    want = bool(place.first_test(st, env)) and bool(place.static_test(st, env))
                    assert v == (PASSES if want else FAILS), place.fixed[k]
                    verdicts[v] += 1
        st = picked[1]
    assert verdicts[PASSES] > 50 and verdicts[FAILS] > 1000
