"""The differential harness: a generic Hypothesis strategy per type, a game's symbolic
state built once (`Sym`), and `compare`, which checks the interpreter against the Z3 terms on
one concrete state.  Used by tests/engine/test_differential.py and the games' tests."""
from __future__ import annotations

import random
from collections import defaultdict

import z3
from hypothesis import strategies as st

from conftest import walk
from solver.engine import domains as dz
from solver.engine import symbolic
from solver.lang.errors import EvalError
from solver.engine.evaluate import Refused
from solver.lang.types import (BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, TextT, finite)


# ---- a generic strategy from a type ---------------------------------------------------------

def values_of(t, max_seq: int = 6, max_keys: int = 6):
    """Concrete values of type ``t`` in the shape solver/lang/types.py documents (enums and keys as
    ordinals, bags as count tuples...).  Seqs are short and bags/sets sparse, so that generated
    states stay readable and close to what games produce."""
    match t:
        case BoolT():
            return st.booleans()
        case IntT(lo, hi):
            return st.integers(lo, hi)
        case EnumT(members=m):
            return st.integers(0, len(m) - 1)
        case RecordT(fields=fields):
            return st.tuples(*(values_of(ft, max_seq, max_keys) for _, ft in fields))
        case SeqT(elem=et, cap=cap):
            return st.lists(values_of(et, max_seq, max_keys),
                            max_size=min(cap, max_seq)).map(tuple)
        case BagT(elem=et, most=most):
            n = finite(et).size
            return st.dictionaries(st.integers(0, n - 1), st.integers(1, most),
                                   max_size=max_keys).map(
                lambda d: tuple(d.get(i, 0) for i in range(n)))
        case SetT(elem=et):
            n = finite(et).size
            return st.sets(st.integers(0, n - 1), max_size=max_keys).map(
                lambda s: tuple(i in s for i in range(n)))
        case MapT(key=kt, val=vt):
            n = finite(kt).size
            return st.tuples(*([values_of(vt, max_seq, max_keys)] * n))
    raise TypeError(t)


def stacks(value_t: IntT):
    """A tower, usually a legal decreasing stack (perhaps topped by a 0), sometimes anything."""
    legal = st.tuples(
        st.lists(st.integers(1, value_t.hi), unique=True, max_size=5).map(
            lambda xs: tuple(sorted(xs, reverse=True))),
        st.booleans()).map(lambda p: p[0] + ((0,) if p[1] else ()))
    with_exceptions = st.lists(st.sampled_from([8, 9, 3, 12, 0, 5]), max_size=4).map(tuple)
    return st.one_of(legal, legal, with_exceptions)


# ---- the game and its symbolic branches, once per module ------------------------------------

class Sym:
    """Z, its branches, and every term to evaluate, packed for one-shot substitution."""

    def __init__(self, game):
        self.game = game
        t = self.t = game.state_type
        fresh = dz.Fresh("d_")
        self.Z = fresh.value(t, "z")
        self.zleaves = symbolic.leaves(t, self.Z)
        # A bounded search (`reachable`) over Z is an unknown to z3: each is recorded, and
        # given the interpreter's answer for the concrete state (`evaluator`).
        searches = game.symbolic.searches
        searches.record = []
        try:
            self.branches = symbolic.branches(game, self.Z)
        finally:
            self.searches, searches.record = searches.record, None
        player_t = game.p.types["Player"]
        self.players = list(finite(player_t).values)
        score = game.expr("score(p)", {"p": player_t}, symbolic=True)[0]
        winner = game.expr("winner(p)", {"p": player_t}, symbolic=True)[0]
        self.score = [score(self.Z, p) for p in self.players]
        self.winner = [winner(self.Z, p) for p in self.players]
        self.by_instance = defaultdict(list)
        for b in self.branches:
            self.by_instance[(b.action, b.params)].append(b)
        # Every symbolic leaf term to evaluate, by id.
        terms: dict[int, z3.ExprRef] = {}

        def add(x):
            if dz.is_sym(x):
                terms.setdefault(x.get_id(), x)
        for b in self.branches:
            add(b.guard)
            for x in symbolic.leaves(t, b.state):
                add(x)
        for x in self.score + self.winner:
            add(x)
        for x in self.zleaves:
            add(x)
        self.bool_terms = [x for x in terms.values() if z3.is_bool(x)]
        self.int_terms = [x for x in terms.values() if not z3.is_bool(x)]
        self.pack_b = z3.Function("pack_b", *([z3.BoolSort()] * len(self.bool_terms)),
                                  z3.BoolSort())(*self.bool_terms)
        self.pack_i = z3.Function("pack_i", *([z3.IntSort()] * len(self.int_terms)),
                                  z3.BoolSort())(*self.int_terms)

    def evaluator(self, S):
        """A function leaf -> concrete Python value, with Z's leaves replaced by S's."""
        sleaves = symbolic.leaves(self.t, S)
        pairs = [(a, dz.lift(b)) for a, b in zip(self.zleaves, sleaves)]
        pairs += self._searched(S, pairs)
        values: dict[int, object] = {}
        for pack, terms in ((self.pack_b, self.bool_terms), (self.pack_i, self.int_terms)):
            got = z3.simplify(z3.substitute(pack, *pairs))
            for term, v in zip(terms, got.children()):
                if z3.is_true(v):
                    values[term.get_id()] = True
                elif z3.is_false(v):
                    values[term.get_id()] = False
                elif z3.is_int_value(v):
                    values[term.get_id()] = v.as_long()
                else:
                    raise AssertionError(f"{term} does not simplify to a constant: {v}")

        def val(x):
            return values[x.get_id()] if dz.is_sym(x) else x
        return val

    def _searched(self, S, pairs) -> list:
        """Each recorded search's unknown, paired with the interpreter's answer in S (the
        searches z3 cannot decide over Z are all over Z itself, in the guards)."""
        out = []
        searches = self.game.symbolic.searches
        for b, e, st, env in self.searches:
            assert st is self.Z, f"{e.span}: a search over a state other than Z"
            fw, fg, fs = searches.concrete(e)
            cenv = [v if not dz.is_sym(v) else _known(z3.simplify(z3.substitute(v, *pairs)))
                    for v in env]
            try:
                start = fs(S, cenv, []) if fs is not None else S
                found = searches.search(e, fg, fw(start, cenv), start, cenv)
            except Refused:
                found = False
            out.append((b, z3.BoolVal(found)))
        return out

    def concrete(self, t, v, val):
        """The concrete value of a (partly) symbolic value of type ``t``."""
        match t:
            case BoolT() | IntT() | EnumT() | TextT():
                return val(v)
            case RecordT(fields=fields):
                return tuple(self.concrete(ft, x, val) for (_, ft), x in zip(fields, v))
            case MapT(val=vt):
                return tuple(self.concrete(vt, x, val) for x in v)
            case BagT() | SetT():
                return tuple(val(x) for x in v)
            case SeqT(elem=et, cap=cap):
                if isinstance(v, tuple):
                    return tuple(self.concrete(et, x, val) for x in v)
                n = val(v.length)
                assert 0 <= n <= cap, f"symbolic seq length {n} outside 0..{cap}"
                return tuple(self.concrete(et, x, val) for x in v.slots[:n])
        raise TypeError(t)


# ---- interesting concrete states --------------------------------------------------------------

def _field_strategies(game):
    ftype = {f.name: f.type for f in game.p.state}
    towers_t = ftype["towers"]
    value_t = towers_t.val.val.elem
    tower_map = st.tuples(*([stacks(value_t)] * finite(towers_t.val.key).size))
    out = {name: values_of(t) for name, t in ftype.items()}
    out["towers"] = st.tuples(*([tower_map] * finite(towers_t.key).size))
    out["saved_towers"] = tower_map
    # Small bags: a hand of at most 5 cards, like a real one.
    out["hand"] = values_of(ftype["hand"], max_keys=5)
    return out


def _bag(game, cards):
    """A bag of the game's Card type (count tuple) from (style, value) pairs."""
    card_t = game.p.types["Card"]
    index = finite(card_t).index
    counts = [0] * finite(card_t).size
    for c in cards:
        counts[index[c]] = min(2, counts[index[c]] + 1)
    return tuple(counts)


cards = st.tuples(st.integers(0, 4), st.integers(0, 15))


@st.composite
def states(draw, game):
    """A start (the initial state, or a seeded random prefix of a playout), then a few fields
    replaced by generated values.  Most states are then set up as a round in progress
    (bidding on a market, taking, or building a hand) so that those rules are exercised."""
    seed = draw(st.integers(0, 10_000))
    steps = draw(st.sampled_from([0, 3, 8, 20, 40, 80, 160]))
    S, _ = walk(game, random.Random(seed), steps)
    S = list(S)
    fs = _field_strategies(game)
    fi = game.field_index
    names = draw(st.lists(st.sampled_from(sorted(fs)), max_size=4, unique=True))
    for name in names:
        S[fi[name]] = draw(fs[name])
    phases = game.p.types["Phase"].members
    scenario = draw(st.sampled_from(["as is", "bidding", "taking", "building", "building"]))
    if scenario != "as is":
        players = finite(game.p.types["Player"]).size
        turn = draw(st.integers(0, players - 1))
        S[fi["turn"]] = turn
        S[fi["phase"]] = phases.index(scenario)
        hand = draw(st.lists(cards, min_size=1, max_size=4))
        market = draw(st.lists(cards, min_size=1, max_size=5))
        n = len(hand) if scenario == "building" else len(market)
        bids = draw(st.lists(st.integers(0, 5), max_size=2, unique=True).map(sorted))
        bids = [(b, draw(st.integers(0, players - 1))) for b in bids if b < n]
        if scenario != "bidding":
            bids.append((n, turn))
        S[fi["bids"]] = tuple(bids)
        S[fi["spoken"]] = draw(st.integers(0, players - 1))
        if scenario == "building":
            S[fi["hand"]] = _bag(game, hand)
        else:
            S[fi["hand"]] = _bag(game, [])
            S[fi["market"]] = _bag(game, market)
        if scenario == "taking":
            S[fi["hand"]] = _bag(game, hand[:max(0, n - 1)])
    return tuple(S)


# ---- the comparison ---------------------------------------------------------------------------

def compare(sym: Sym, S) -> dict:
    """Compare both domains on state ``S``; return counts of what was compared."""
    game = sym.game
    val = sym.evaluator(S)
    # Sanity: the substitution really gives S back.
    assert sym.concrete(sym.t, sym.Z, val) == S
    interp = {}
    errors = set()
    for a in game.actions:
        for params in a.instances(S):
            key = (a.name, params)
            try:
                st2, _ = a.apply(S, params)
                interp[key] = st2
            except Refused:
                interp[key] = None
            except EvalError:
                # An undefined operation (e.g. pop of an empty seq in a state no game
                # reaches): the symbolic domain has no such notion, nothing to compare.
                errors.add(key)
    true_branches = defaultdict(list)
    for b in sym.branches:
        assert dz.is_concrete(b.params), f"{b.action}{b.params}: symbolic parameters"
        if val(b.guard) is True:
            true_branches[(b.action, b.params)].append(b)
    counts = {"legal": 0, "refused": 0}
    for key, st2 in interp.items():
        got = true_branches.get(key, [])
        if st2 is None:
            assert not got, f"{key}: the interpreter refuses it, z3 allows it"
            counts["refused"] += 1
            continue
        assert len(got) == 1, f"{key}: legal in the interpreter; {len(got)} z3 paths hold"
        succ = sym.concrete(sym.t, got[0].state, val)
        if succ != st2:
            diff = [f.name for f, x, y in zip(game.p.state, succ, st2) if x != y]
            raise AssertionError(f"{key}: successor states differ in {diff}")
        counts["legal"] += 1
    # A branch that holds for an instance outside the interpreter's domains is an error too.
    for key in true_branches:
        assert key in interp or key in errors, f"{key}: z3 allows a move the interpreter " \
                                               "does not even list"
    # Scores and winners.
    score = game.expr("score(p)", {"p": game.p.types["Player"]})[0]
    winner = game.expr("winner(p)", {"p": game.p.types["Player"]})[0]
    for p in sym.players:
        assert val(sym.score[p]) == score(S, p), f"score({p})"
        assert val(sym.winner[p]) == bool(winner(S, p)), f"winner({p})"
    return counts


def _known(v):
    if z3.is_true(v) or z3.is_false(v):
        return z3.is_true(v)
    if z3.is_int_value(v):
        return v.as_long()
    raise AssertionError(f"a search's frame holds {v}, not a constant")
