"""The generated code (solver/engine/codegen.py) against the closure interpreter it replaces: the same
value or the same error, for every def, invariant, puzzle expression and action of every spec,
on seeded reachable states; the errors of generated code with their spans; and that code is
still generated for the hot defs of the Torres bound."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, walk
from solver.engine import codegen, codegen_loops, memo
from solver.lang import ir
from solver.lang.check import check_expression
from solver.lang.resources import spec_dir
from solver.lang.sources import read_source
from solver.lang.errors import EvalError
from solver.engine.evaluate import Compiler, Refused
from solver.engine.game import Game, load_game
from solver.lang.types import (BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, default,
                          finite)


def _specs():
    """(game, variants) for every spec file: an extension on top of its base."""
    out = []
    for path in sorted(Path(spec_dir()).glob("*.rules")):
        src = read_source(path)
        out.append((src.base, (path.stem,)) if src.base else (path.stem, ()))
    return out


def _checked(game, text: str, bindings: dict):
    """The IR of ``text`` with locals ``bindings``, its locals' env indices, its frame size."""
    e, slots, size = check_expression(game.symbols, text, bindings)
    return e, [s + 1 for s in slots], size + 1


def _random(t, rng: random.Random):
    """Any value of type ``t`` (reachable or not: both interpreters must agree on it too)."""
    match t:
        case BoolT():
            return rng.random() < 0.5
        case IntT(lo, hi):
            return rng.randint(lo, hi)
        case EnumT(members=m):
            return rng.randrange(len(m))
        case RecordT(fields=fields):
            return tuple(_random(ft, rng) for _, ft in fields)
        case MapT(key=kt, val=vt):
            return tuple(_random(vt, rng) for _ in range(finite(kt).size))
        case SetT(elem=et):
            return tuple(rng.random() < 0.3 for _ in range(finite(et).size))
        case BagT(elem=et, most=most):
            return tuple(rng.choice((0, 0, 1, most)) for _ in range(finite(et).size))
        case SeqT(elem=et, cap=cap):
            return tuple(_random(et, rng) for _ in range(rng.randint(0, cap)))
    return default(t)


def _outcome(f, st, env):
    try:
        return ("value", f(st, env))
    except EvalError as err:
        return ("error", err.message, err.span)
    except Exception as err:        # noqa: BLE001 - a Python error must be the same one too
        return ("python", type(err).__name__, str(err))


def _def_params(game, item):
    return game.symbols.def_params(item.name)


def _states(game, seed: int, depths=(0, 7, 25, 60, 140)):
    """Seeded reachable states, each with the state before it (for transition properties)."""
    out = []
    for k, depth in enumerate(depths):
        rng = random.Random(seed * 1000 + k)
        trail = [game.initial()]
        walk(game, rng, depth, lambda m, st: trail.append(st))
        out.append((trail[-2] if len(trail) > 1 else trail[-1], trail[-1]))
    return out


@pytest.mark.parametrize("name,variants", _specs(), ids=lambda x: x if isinstance(x, str)
                         else "+".join(x) or "base")
def test_generated_code_agrees_with_closures(name, variants, monkeypatch):
    _agree(load_game(name, variants), monkeypatch)


def test_split_code_agrees_with_closures(monkeypatch):
    """Code nested deeper than Python allows is compiled apart and called: forced here at
    every level (a fixpoint's step then reads its values through fixinc's recording proxy),
    and written eagerly."""
    monkeypatch.setattr(codegen, "MAX_INDENT", 1)
    monkeypatch.setattr(codegen, "MAX_LOOPS", 0)
    monkeypatch.setattr(codegen, "LAZY", False)
    before = codegen.STATS["external"]
    _agree(load_game("torres", (), (("players", 3),)), monkeypatch, actions=False)
    assert codegen.STATS["external"] > before


def _agree(game, monkeypatch, actions=True):
    st_t = game.state_type
    gen, clo = Compiler(False, st_t, codegen=True), Compiler(False, st_t, codegen=False)
    assert gen.codegen and not clo.codegen
    rng = random.Random(7)
    states = _states(game, 3)
    compared = 0

    def same(e, env_of, draws=3):
        """Both compilations of ``e`` on each state, with ``draws`` environments drawn (one
        when nothing in it is drawn at random: the same evaluation again would add nothing)."""
        nonlocal compared
        fg, fc = gen.expr(e), clo.expr(e)
        for old, st in states:
            for _ in range(draws):
                env = env_of(old)
                got, want = _outcome(fg, st, list(env)), _outcome(fc, st, list(env))
                assert got == want, (e.span, got, want)
                compared += 1

    for dname, item in game.p.defs.items():
        if item.kind != "def":
            continue
        params = _def_params(game, item)
        e, idx, size = _checked(game, f"{dname}({', '.join(n for n, _ in params)})",
                                dict(params))

        def env_of(old, idx=idx, size=size, params=params):
            env = [old] + [None] * size
            for i, (_, t) in zip(idx, params):
                env[i] = _random(t, rng)
            return env
        same(e, env_of, 3 if params else 1)
    for inv in game.p.invariants:
        same(inv.expr, lambda old, inv=inv: [old] + [None] * inv.frame, 1)
    for pz in game.p.puzzles:
        def env_of(old, pz=pz):
            env = [old] + [None] * pz.frame
            for inp in pz.inputs:
                env[inp.slot + 1] = _random(inp.type, rng)
            return env
        for q in pz.queries:
            for e in (q.goal, q.maximize, q.bound, q.within):
                if e is not None:
                    same(e, env_of)
    assert compared > 0
    if not actions:
        return

    # Every action's verdict and outcome, through a whole game compiled each way.
    monkeypatch.setenv("RULEBOOK_CODEGEN", "0")
    plain = Game(game.p, game.symbols)
    assert not plain.concrete.codegen and game.concrete.codegen
    for _, st in states:
        assert [_verdict(o) for o in game.moves(st)] == [_verdict(o) for o in plain.moves(st)]


def _verdict(outcome):
    """An outcome of Game.moves, with the rule and message of a refusal."""
    return tuple((x.rule, x.message) if isinstance(x, Refused) else x for x in outcome)


@pytest.fixture
def errors_game(monkeypatch):
    monkeypatch.setenv("RULEBOOK_SPECS", str(FIXTURES))
    return load_game("codegen")


@pytest.mark.parametrize("text,pile,n,arg", [
    ("at(i)", (), 1, 3),                 # index out of range
    ("at(i)", (0, 1), 1, 1),             # in range
    ("ratio(i)", (), 0, 4),              # division by zero
    ("ratio(i)", (), 2, 5),
    ("first()", (), 0, 0),               # top of an empty seq
    ("rest()", (), 0, 0),                # pop of an empty seq
    ("rest()", (2, 1), 0, 0),
    ("narrow(i)", (), 1, 2),             # outside the declared type
    ("narrow(i)", (), 0, 2),
    ("narrow_map(i)", (), 1, 2),         # a map entry outside the declared type
    ("narrow_map(i)", (), 0, 2),
    ("narrow_seq(i)", (), 1, 2),         # a seq item outside it
    ("narrow_seq(i)", (), 0, 2),
    ("guarded(i)", (), 0, 3),            # `and` stops before the index
    ("found(i)", (1,), 0, 4),            # the `where` stops before the index
    ("late(i)", (0, 0), 0, 4),           # ... and without it, the index fails
    ("late(i)", (0, 1), 0, 4),           # ... unless `exists` stops first
    ("tops()", (), 0, 0),
])
def test_errors_are_the_closures(errors_game, text, pile, n, arg):
    g = errors_game
    e, idx, size = _checked(g, text, {"i": IntT(0, 9)} if "(i)" in text else {})
    st = (pile, n)
    env = [None] * (size + 1)
    for i in idx:
        env[i] = arg
    fg = Compiler(False, g.state_type, codegen=True).expr(e)
    fc = Compiler(False, g.state_type, codegen=False).expr(e)
    got, want = _outcome(fg, st, list(env)), _outcome(fc, st, list(env))
    assert got == want
    assert codegen.source_of(fg) is not None     # generated, not a closure


def test_index_error_has_its_span(errors_game):
    e, idx, size = _checked(errors_game, "at(i)", {"i": IntT(0, 9)})
    f = Compiler(False, errors_game.state_type, codegen=True).expr(e)
    env = [None] * (size + 1)
    env[idx[0]] = 2
    with pytest.raises(EvalError) as err:
        f(((0,), 0), env)
    assert err.value.message == "index 2 is outside a seq of length 1"
    assert (err.value.span.line, err.value.span.col) == (12, 25)
    assert "raise" in codegen.source_of(f)


# The defs the Torres best-turn bound spends its time in: each must be generated code, its
# loops and fixpoints inline (a regression to closures would go unnoticed otherwise, but for
# the timings).  `top_gains` is a `largest`, whose closure sorts the items these defs give.
HOT = ["turn_bound", "single_rises", "double_rises",
       "cap_level", "approach", "moves_to", "best_level", "royal", "bonus", "area", "rep",
       "castle", "built", "tallest_free"]


def _body(e):
    """The def body a call compiles separately (behind its memo), or the expression."""
    return e.body if isinstance(e, ir.Call) else e


@pytest.mark.parametrize("name", HOT)
def test_hot_defs_are_generated(name):
    game = load_game("torres")
    assert game.concrete.codegen
    params = _def_params(game, game.p.defs[name])
    e, _, _ = _checked(game, f"{name}({', '.join(n for n, _ in params)})", dict(params))
    comp = Compiler(False, game.state_type)
    src = codegen.source_of(comp.expr(_body(e)))
    assert src is not None, f"{name} is not generated"
    assert "def f(st, env" in src


def _fix_of(game, text, bindings):
    e, _, _ = _checked(game, text, bindings)
    body = _body(e)
    while isinstance(body, ir.Call):        # a def that calls the def holding the fix
        body = body.body
    assert isinstance(body, ir.Fix)
    return body


def test_fixpoints_are_inline(monkeypatch):
    """A fix over a table that is no flood is a loop of the generated code, reads recorded
    (passage's, once the flood's search is turned off); moves_to, a shortest-path relaxation,
    is solved at once (fixinc.min_plus), called from it."""
    from solver.engine import fixinc
    game = load_game("torres")
    body = _fix_of(game, "passage(a, k)", {"a": game.p.types["Sq"], "k": IntT(0, 16)})
    assert fixinc.flood(body, {}) is not None
    monkeypatch.setattr(fixinc, "flood", lambda e, cache: None)
    src = codegen.source_of(Compiler(False, game.state_type).expr(body))
    # Each entry read is entered in its readers' list at once: readers[entry].append(key).
    assert "while True:" in src and re.search(r"_t\d+\[_t\d+\]\.append\(_t\d+\)", src), src
    body = _fix_of(game, "moves_to(p)", {"p": game.p.types["Player"]})
    assert fixinc.min_plus(body, {}) is not None


@pytest.mark.parametrize("variants", [(), ("gate:blocked",), ("gate:free", "king_gate:passes")])
def test_a_flood_is_the_iterated_fix(variants, monkeypatch):
    """passage's flood found by a search from its seed (fixinc.compile_flood) has the value
    of the incremental iteration, for every square and level on seeded states."""
    from solver.engine import fixinc
    game = load_game("torres", variants)
    sq = game.p.types["Sq"]
    e, idx, size = _checked(game, "passage(a, k)", {"a": sq, "k": IntT(0, 16)})
    assert isinstance(e, ir.Call) and isinstance(e.body, ir.Fix)
    # The call's arguments go to its slots: the fix reads a and k there.
    idx = [s + 1 for s in e.slots]
    body = e.body
    assert fixinc.flood(body, {}) is not None
    searched = Compiler(False, game.state_type).expr(body)
    monkeypatch.setattr(fixinc, "flood", lambda e, cache: None)
    iterated = Compiler(False, game.state_type).expr(body)
    found = 0
    for _, st in _states(game, 5):
        for a in finite(sq).values:
            for k in (0, 1, 2, 4):
                env = [None] * (size + 1)
                env[idx[0]], env[idx[1]] = a, k
                got = searched(st, list(env))
                assert got == iterated(st, list(env))
                found += sum(got) > sum(1 for t in finite(sq).values
                                       if abs(t[0] - a[0]) + abs(t[1] - a[1]) == 1)
    assert found        # some region grew past the seed's squares


def test_a_castle_walk_visits_only_its_squares():
    """`max t in Sq where c[t] and ...` over a castle c walks c's squares alone (the list is
    remembered per castle), with the values of the closures (test_generated_code_agrees...)."""
    game = load_game("torres")
    p, sq = game.p.types["Player"], game.p.types["Sq"]
    e, _, _ = _checked(game, "best_level(p, s)", {"p": p, "s": sq})
    fn = Compiler(False, game.state_type).expr(_body(e))
    src = codegen.source_of(fn)         # built now: its constants are then its defaults
    assert codegen_loops.held_keys in (fn.__defaults__ or ()), src


def test_codegen_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("RULEBOOK_CODEGEN", "0")
    assert not Compiler(False).codegen
    monkeypatch.setenv("RULEBOOK_CODEGEN", "1")
    assert Compiler(False).codegen and not Compiler(True).codegen


@pytest.mark.parametrize("text,safe", [
    ("min t in 0..9 where t >= i: t", True),
    ("max t in 0..9 where t < i + n: t", True),
    ("min t in i..3 where t > 5: t", True),                  # no value passes: the extreme
    ("min t in 0..9 where t == 0 or (forall j in 0..i where j != t: j != n): t", True),
    ("min t in 0..3 where pile[t] == b: t", False),          # a seq index may fail
    ("max t in 0..9 where t / n > 1: t", False),             # a division may fail
    ("min t in 0..9 where narrow(t) > 1: t", False),         # a call may fail
])
@pytest.mark.parametrize("pile,n", [((), 0), ((1, 0), 2), ((0, 1, 1), 3)])
def test_a_first_extreme_stops_at_its_first_value(errors_game, text, safe, pile, n):
    """`min t in lo..hi where w: t` stops at the first value that passes when `w` cannot fail
    (codegen_loops.first_extreme): the same value, or the same error, as the closures."""
    g = errors_game
    e, idx, size = _checked(g, text, {"i": IntT(0, 9)})
    assert codegen_loops.cannot_fail(e.where) == safe
    for arg in (0, 2, 7):
        env = [None] * (size + 1)
        for i in idx:
            env[i] = arg
        fg = Compiler(False, g.state_type, codegen=True).expr(e)
        fc = Compiler(False, g.state_type, codegen=False).expr(e)
        assert _outcome(fg, (pile, n), list(env)) == _outcome(fc, (pile, n), list(env))
        assert ("break" in codegen.source_of(fg)) == safe


def _towers_free():
    """Towers' `free(o, s, r, at)` (a pure call keyed by the occupancy) checked: the types,
    the locals' slots and count, and its generated and closure forms."""
    game = load_game("towers")
    t = game.p.types
    e, idx, size = _checked(game, "free(o, s, r, at)",
                            {"o": t["Occ"], "s": t["Shape"], "r": t["Rot"], "at": t["Cell"]})
    return (t, idx, size, Compiler(False, game.state_type, codegen=True).expr(e),
            Compiler(False, game.state_type, codegen=False).expr(e))


def test_a_large_keyed_memo_pauses_while_it_misses(monkeypatch):
    """A pure call keyed by a large value (Towers' occupancy) stops remembering after a window
    of misses that hit too rarely, and remembers again after its pause (memo.pure_rate);
    its values are the closures' throughout."""
    monkeypatch.setattr(memo, "PURE_WINDOW", 8)
    monkeypatch.setattr(memo, "PURE_PAUSE", 5)
    t, idx, size, fg, fc = _towers_free()
    codegen.source_of(fg)
    rate = next(d for d in fg.__defaults__ if type(d) is list and len(d) == 2)
    rng = random.Random(3)
    occ = _random(t["Occ"], rng)
    seen = []

    def ask(o):
        env = [None] * (size + 1)
        for i, v in zip(idx, (o, 1, 0, (0, 0, 1))):
            env[i] = v
        assert _outcome(fg, None, list(env)) == _outcome(fc, None, list(env))
        seen.append(rate[0])
    for _ in range(40):         # a new occupancy each time: every call misses
        ask(_random(t["Occ"], rng))
    paused = seen.index(-1)
    assert max(seen[paused:]) > 0           # paused, then remembering again
    seen.clear()
    for _ in range(40):         # the same one: every call but the first hits
        ask(occ)
    assert min(seen) >= 0                   # never paused


@pytest.mark.parametrize("limit", [0, codegen_loops.PAUSED_INLINE_NODES])
def test_a_paused_memo_writes_the_body_out(limit, monkeypatch):
    """While a large-keyed memo pauses, a small body (Towers' `free`, a loop over a block's
    cubes) is written out at its call site rather than called through env
    (`PAUSED_INLINE_NODES`); either way the values are the closures'."""
    monkeypatch.setattr(memo, "PURE_WINDOW", 4)
    monkeypatch.setattr(memo, "PURE_PAUSE", 1000)
    monkeypatch.setattr(codegen_loops, "PAUSED_INLINE_NODES", limit)
    t, idx, size, fg, fc = _towers_free()
    assert ("for " in codegen.source_of(fg)) == (limit > 0)
    rate = next(d for d in fg.__defaults__ if type(d) is list and len(d) == 2)
    rng = random.Random(9)
    values = set()
    for k in range(60):
        o = tuple(rng.choice((0, 0, 0, 5)) for _ in range(finite(t["Occ"].key).size))
        env = [None] * (size + 1)
        for i, v in zip(idx, (o, k % 16, rng.randrange(24), (rng.randrange(-2, 3), 0, 1))):
            env[i] = v
        got = _outcome(fg, None, list(env))
        assert got == _outcome(fc, None, list(env))
        values.add(got)
    assert rate[0] < 0 and values == {("value", True), ("value", False)}


def test_a_straight_def_is_written_out():
    """A call of a def of a few operations and no call or loop (Towers' `cell_at`, three
    additions) is written out where it is called; a longer one (`value`, a chain of sixteen
    `if`s inside) is still remembered by its arguments."""
    game = load_game("towers")
    t = game.p.types
    binds = {"s": t["Shape"], "r": t["Rot"], "at": t["Cell"], "i": t["Cube"]}
    for text, remembered in (("cell_at(s, r, at, i)", False), ("value(s)", True)):
        e, _, _ = _checked(game, text, binds)
        src = codegen.source_of(Compiler(False, game.state_type).expr(e))
        assert (".get(" in src) == remembered, src


def test_a_def_decided_by_its_first_operand_asks_its_memo_only_beyond():
    """Towers' `first_ok(s, r, at)` is `at.z == 0 implies ...` (under the default reading):
    the generated call asks `at.z == 0` itself, and looks the remembered calls up (and runs
    the body) only where that does not decide; the values are the closures' either way."""
    game = load_game("towers")
    t = game.p.types
    e, idx, size = _checked(game, "first_ok(s, r, at)",
                            {"s": t["Shape"], "r": t["Rot"], "at": t["Cell"]})
    fg = Compiler(False, game.state_type, codegen=True).expr(e)
    fc = Compiler(False, game.state_type, codegen=False).expr(e)
    codegen.source_of(fg)
    memos = [d for d in fg.__defaults__ if type(d) is dict and not d]
    assert len(memos) == 1

    def ask(s, r, at):
        env = [None] * (size + 1)
        for i, v in zip(idx, (s, r, at)):
            env[i] = v
        got = _outcome(fg, None, list(env))
        assert got == _outcome(fc, None, list(env))
        return got
    aloft = [(s, r, (x, 1, z)) for s in (0, 6, 15) for r in (0, 5) for x in (-2, 1, 3)
             for z in (1, 7)]
    assert all(ask(*c) == ("value", True) for c in aloft)
    assert not memos[0]                     # decided without the memo
    low = [(s, r, (x, 1, 0)) for s in (0, 6, 15) for r in (0, 5) for x in (-2, 1, 3)]
    values = {ask(*c) for c in low}
    assert len(memos[0]) == len(low) and len(values) == 2    # asked, and both ways


def test_a_loop_over_a_type_zips_the_maps_it_reads_there():
    """Towers' `kept_slots(t, d)`-like tables read two maps at the binder: the generated loop
    walks their entries beside the keys (no look-up of a key's index), and its values are the
    closures'.  (`clear(o, k)`, which reads its binder only as `o[c]`, is read by value:
    `test_a_table_read_by_value_*`.)"""
    game = load_game("towers")
    t = game.p.types
    e, idx, size = _checked(game, "rest(k, d)", {"k": t["Tower"], "d": MapT(t["Slot"], BoolT())})
    fg = Compiler(False, game.state_type, codegen=True).expr(e)
    fc = Compiler(False, game.state_type, codegen=False).expr(e)
    srcs = [codegen.source_of(fg)] + [codegen.source_of(d) for d in fg.__defaults__
                                      if callable(d) and codegen.source_of(d)]
    assert any("zip(" in s for s in srcs), srcs
    rng = random.Random(4)
    for _ in range(20):
        env = [None] * (size + 1)
        for i, v in zip(idx, (_random(t["Tower"], rng), _random(MapT(t["Slot"], BoolT()), rng))):
            env[i] = v
        got = _outcome(fg, None, list(env))
        assert got == _outcome(fc, None, list(env)) and got[0] == "value"


def _by_value(game, text, binds):
    e, idx, size = _checked(game, text, binds)
    fg = Compiler(False, game.state_type, codegen=True).expr(e)
    fc = Compiler(False, game.state_type, codegen=False).expr(e)
    srcs = [codegen.source_of(fg)] + [codegen.source_of(d) for d in fg.__defaults__
                                      if callable(d) and codegen.source_of(d)]
    assert any("dict.fromkeys(" in s for s in srcs), srcs

    def ask(st, *args):
        env = [None] * (size + 1)
        for i, v in zip(idx, args):
            env[i] = v
        got = _outcome(fg, st, list(env))
        assert got == _outcome(fc, st, list(env))
        return got
    return ask


def test_a_table_read_by_value_is_the_map_when_nothing_changes(errors_game):
    """`capped(m)` reads its binder only as `m[s]`, over 64 keys with 6 values: it is
    evaluated once per distinct entry; when no entry changes the table is ``m`` itself (the
    same object: memos keyed by identity meet it), else a new map, the closures' value."""
    sq = errors_game.p.types["Sq"]
    ask = _by_value(errors_game, "capped(m)", {"m": MapT(sq, IntT(0, 5))})
    rng = random.Random(5)
    st = ((), 0)
    for _ in range(20):
        m = tuple(rng.choice((0, 0, 0, 1, 2, 4)) for _ in range(64))
        got = ask(st, m)
        assert got == ("value", m) and got[1] is m
        m2 = m[:9] + (5,) + m[10:]
        got = ask(st, m2)
        assert got[0] == "value" and got[1] is not m2 and got[1][9] == 0


def test_a_table_read_by_value_raises_the_walks_first_error(errors_game):
    """`lifted(m)` fails at an entry above 2 (with n = 0: `narrow` leaves its declared type):
    read by value, the error is the one the walk of every key meets first (the value of the
    first failing key, in the message), whatever the order of the distinct values."""
    sq = errors_game.p.types["Sq"]
    ask = _by_value(errors_game, "lifted(m)", {"m": MapT(sq, IntT(0, 5))})
    rng = random.Random(6)
    kinds = set()
    for k in range(40):
        values = (0, 0, 0, 1, 2) if k % 2 else (0, 0, 0, 1, 2, 3, 4, 5)
        m = tuple(rng.choice(values) for _ in range(64))
        kinds.add(ask(((), k % 3), m)[0])
    assert kinds == {"value", "error"}
