"""Invariants: proved inductive, held up to a depth, or refuted with a trace that replays.
The prover runs on small toy specs (tests/fixtures/toy*.rules); on les-5-tours it is far too
slow for the suite, so only its base case (the initial state) is checked there."""
from __future__ import annotations

import pytest

from conftest import FIXTURES, GAME, holds, run_cli
from solver.engine.game import Move, load_game, load_path
from solver.lang.errors import RulebookError
from solver.prover import induction, nearby, sameterms, splits, terms, tiers
from solver.prover.options import ProveOptions
from solver.prover.prove import prove
from solver.prover.result import Tally

BMC_DEPTH = 5
TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def toy():
    return load_path(FIXTURES / "toy.rules")


_RESULTS: dict = {}


def _results(toy) -> dict:
    """prove() on the toy, run once and shared; called inside each test rather than in a
    fixture, so that a crash of the prover shows as a failure of each test that needs it."""
    if "toy" not in _RESULTS:
        _RESULTS["toy"] = {r.name: r for r in prove(toy, ProveOptions(BMC_DEPTH, TIMEOUT_MS))}
    return _RESULTS["toy"]


def _inv(game, name):
    return next(i for i in game.p.invariants if i.name == name)


def _replay(game, trace):
    """The states along a trace of JSON moves (the toy's actions take no parameters)."""
    st = game.initial()
    states = [st]
    for m in trace:
        assert isinstance(m, list) and len(m) == 1, m
        st, _ = game.apply(st, Move(m[0], ()))
        states.append(st)
    return states


def test_toy_has_what_the_tests_need(toy):
    assert [a.name for a in toy.actions] == ["inc", "dec", "climb", "jump"]
    assert {i.name: i.transition for i in toy.p.invariants} == {
        "even": False, "not_eight": False, "small": False, "m_grows": True, "n_grows": True}


def test_every_invariant_gets_a_result(toy):
    toy_results = _results(toy)
    assert list(toy_results) == [i.name for i in toy.p.invariants]
    assert all(r.status in {"inductive", "holds", "refuted", "unknown"}
               for r in toy_results.values())


def test_inductive_invariant(toy):
    toy_results = _results(toy)
    r = toy_results["even"]
    assert r.status == "inductive"
    assert r.kind == "invariant"
    assert r.trace == []
    assert r.headline().startswith("inductive")


def test_reachable_but_not_inductive_invariant_holds_up_to_depth(toy):
    toy_results = _results(toy)
    r = toy_results["not_eight"]
    assert r.status == "holds"
    assert r.depth == BMC_DEPTH
    assert r.headline() == f"holds up to depth {BMC_DEPTH} (bounded model checking)"
    assert "not inductive" in r.detail
    # Why it is not inductive: from n = 7 (which satisfies it) climb reaches 8.
    inv = _inv(toy, "not_eight")
    fi = toy.field_index
    st7 = tuple(7 if i == fi["n"] else v for i, v in enumerate(toy.initial()))
    assert holds(toy, inv, st7)
    st8, _ = toy.apply(st7, Move("climb", ()))
    assert not holds(toy, inv, st8)


def test_false_invariant_is_refuted_with_a_replayable_trace(toy):
    toy_results = _results(toy)
    r = toy_results["small"]
    assert r.status == "refuted"
    inv = _inv(toy, "small")
    states = _replay(toy, r.trace)
    assert len(r.trace) == r.depth >= 3           # n < 3 needs at least three incs
    assert not holds(toy, inv, states[-1])
    assert all(holds(toy, inv, s) for s in states[:-1])   # the depth is the first violation


def test_transition_property_that_holds(toy):
    toy_results = _results(toy)
    r = toy_results["m_grows"]
    assert r.kind == "transition"
    assert r.status == "inductive"


def test_false_transition_property_is_refuted(toy):
    toy_results = _results(toy)
    r = toy_results["n_grows"]
    assert r.kind == "transition"
    assert r.status == "refuted"
    states = _replay(toy, r.trace)
    inv = _inv(toy, "n_grows")
    assert not holds(toy, inv, states[-1], old=states[-2])
    assert r.trace[-1] == ["dec"]                 # only dec lowers n


def _shortest_violation(game, inv, depth: int) -> int | None:
    """The fewest moves after which ``inv`` fails, by a breadth-first search of the
    interpreter's moves (a transition property: on the last move)."""
    layer = [game.initial()]
    for k in range(1, depth + 1):
        nxt = []
        for st in layer:
            for _, st2, _ in game.legal(st):
                ok = holds(game, inv, st2, old=st) if inv.transition else holds(game, inv, st2)
                if not ok:
                    return k
                nxt.append(st2)
        layer = list(dict.fromkeys(nxt))
    return None


def test_a_refutation_is_the_shortest_trace(toy):
    # z3's model is any run of the unrolling that breaks the property (in a fresh process
    # n_grows came back as inc, inc, dec): the prover asks for shorter runs until none is.
    toy_results = _results(toy)
    for name in ("small", "n_grows"):
        r = toy_results[name]
        assert r.status == "refuted"
        assert r.depth == len(r.trace) == _shortest_violation(toy, _inv(toy, name), BMC_DEPTH)
    assert toy_results["n_grows"].trace == [["inc"], ["dec"]]


def test_a_strict_transition_is_not_assumed_of_a_step_that_changes_nothing():
    """The prover assumes a transition property across a step that changes nothing (old(x)
    <= x of x itself) as a tautology: a strict one (old(n) < n) is false there, and assuming
    it proved it inductive although `wait` leaves n as it is.  It is refuted, with a trace
    ending in that move."""
    game = load_path(FIXTURES / "strict.rules")
    r = {r.name: r for r in prove(game, ProveOptions(2, TIMEOUT_MS))}["n_rises"]
    assert r.status == "refuted", r.summary
    assert r.trace[-1] == ["wait"]


def test_invariant_false_at_the_start_is_refuted_at_depth_0():
    game = load_path(FIXTURES / "toy_base.rules")
    res = {r.name: r for r in prove(game, ProveOptions(3, TIMEOUT_MS))}
    assert res["started"].status == "refuted"
    assert res["started"].depth == 0
    assert res["started"].trace == []
    assert res["bounded"].status == "inductive"


def test_prove_only_one_invariant():
    game = load_path(FIXTURES / "toy_base.rules")
    res = prove(game, ProveOptions(3, TIMEOUT_MS, only="bounded"))
    assert [(r.name, r.status) for r in res] == [("bounded", "inductive")]


def test_prove_named_invariants_with_and_without_the_others():
    """`only` names what is reported; the other invariants are still assumed, so a bound that
    needs an auxiliary is inductive.  `alone` assumes only the named ones: the same bound is
    then not inductive (its step is refuted from k = 11, n = 0, which `same` rules out) and
    is left to bounded model checking; named with its auxiliary, it is inductive again."""
    game = load_path(FIXTURES / "aux.rules")
    with_aux = prove(game, ProveOptions(3, TIMEOUT_MS, only=("bounded",)))
    assert [(r.name, r.status) for r in with_aux] == [("bounded", "inductive")]
    alone = prove(game, ProveOptions(3, TIMEOUT_MS, only=("bounded",), alone=True))
    assert [(r.name, r.status, r.depth) for r in alone] == [("bounded", "holds", 3)]
    both = prove(game, ProveOptions(3, TIMEOUT_MS, only=("bounded", "same"), alone=True))
    assert [(r.name, r.status) for r in both] == [("bounded", "inductive"),
                                                  ("same", "inductive")]


def test_prove_alone_needs_names_and_known_ones():
    game = load_path(FIXTURES / "aux.rules")
    with pytest.raises(RulebookError, match="needs the invariants named"):
        prove(game, ProveOptions(1, TIMEOUT_MS, alone=True))
    with pytest.raises(RulebookError, match="no invariant named 'nope'"):
        prove(game, ProveOptions(1, TIMEOUT_MS, only=("bounded", "nope")))


def test_a_path_the_candidates_rule_out_is_not_checked_invariant_by_invariant(monkeypatch):
    """`wild` needs a mode that `calm` rules out: its path is dismissed by one query against
    the small conjuncts its guard reads, and the invariants it changes (n, mode) are not
    checked on it one by one.  Turned off, each is checked (and proved, from every
    assumption): the same verdicts, more work."""
    game = load_path(FIXTURES / "vacuous.rules")
    calls = []
    real = tiers.step_each

    def counting(local, guard, goal, conj, name, *rest):
        calls.append(name)
        return real(local, guard, goal, conj, name, *rest)
    monkeypatch.setattr(tiers, "step_each", counting)
    on = {r.name: r.status for r in prove(game, ProveOptions(2, TIMEOUT_MS))}
    with_check = len(calls)
    calls.clear()
    monkeypatch.setattr(induction, "VACUITY_VARS", -1)
    off = {r.name: r.status for r in prove(game, ProveOptions(2, TIMEOUT_MS))}
    assert on == off == {"calm": "inductive", "bounded": "inductive"}
    assert len(calls) == with_check + 2, (with_check, calls)


def test_an_action_whose_paths_are_possible_is_not_asked_about_vacuity_for_long(monkeypatch):
    """`pick` has six paths, all possible: after VACUITY_MISSES of them the others are not
    checked for vacuity (one query each, wasted); `wild`'s one path still is."""
    game = load_path(FIXTURES / "vacuous.rules")
    asked = []
    real = induction._vacuous

    def counting(local, guard, *rest):
        asked.append(str(guard))
        return real(local, guard, *rest)
    monkeypatch.setattr(induction, "_vacuous", counting)
    res = {r.name: r.status for r in prove(game, ProveOptions(2, TIMEOUT_MS))}
    assert res == {"calm": "inductive", "bounded": "inductive"}
    assert sum("2 ==" in g or "== 2" in g for g in asked) == 1, asked     # wild's
    assert len(asked) <= 1 + induction.VACUITY_MISSES + 1, asked                  # inc's, pick's


def test_a_candidate_z3_gave_up_on_is_asked_on_few_of_an_actions_paths(monkeypatch, tmp_path):
    """With a store, a candidate z3 gave up on is still checked on the later paths, but on at
    most GAVE_UP_MISSES of one action's paths in a case and round: z3 "gives up" on
    `bounded` on each of `pick`'s six paths, and is asked on two of them, not six; the
    verdicts are those of asking every path, and the paths not asked are not recorded."""
    from solver.engine.symbolic import Unknown
    game = load_path(FIXTURES / "vacuous.rules")
    real, asked = tiers.step_each, []

    def giving_up(local, guard, goal, conj, name, items, readers, candidates, memo, split,
                  timeout_ms):
        action = split[4][0]
        asked.append((action, name))
        if (action, name) == ("pick", "bounded"):
            raise Unknown("simulated")
        return real(local, guard, goal, conj, name, items, readers, candidates, memo, split,
                    timeout_ms)
    monkeypatch.setattr(tiers, "step_each", giving_up)

    def run(db):
        asked.clear()
        tally = Tally()
        res = {r.name: r.status for r in prove(game, ProveOptions(2, TIMEOUT_MS, store=str(db)),
                                               tally=tally)}
        return res, asked.count(("pick", "bounded")), tally
    misses = induction.GAVE_UP_MISSES
    few, n_few, _ = run(tmp_path / "few.sqlite")
    monkeypatch.setattr(induction, "GAVE_UP_MISSES", 99)
    every, n_every, _ = run(tmp_path / "every.sqlite")
    assert few == every and few["bounded"] != "inductive" and few["calm"] == "inductive"
    assert n_every >= 6 and n_few == misses * n_every // 6
    # A second run asks the paths neither run recorded: z3 gave up on them.
    monkeypatch.setattr(induction, "GAVE_UP_MISSES", misses)
    again, n_again, t_again = run(tmp_path / "few.sqlite")
    assert again == few and n_again == n_few and t_again.reused < t_again.paths


def test_toy_example_is_confirmed(toy):
    from solver.queries.examples import run_example
    res = run_example(toy, toy.p.examples[0])
    assert res.confirmed, [o.as_json() for o in res.outcomes]


# ---- les-5-tours: the base case only -------------------------------------------------------

@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_les_5_tours_invariants_hold_initially(players):
    game = load_game(GAME, (), (("players", players),))
    st = game.initial()
    invs = [i for i in game.p.invariants if not i.transition]
    assert {i.name for i in invs} >= {"whole_deck", "legal_towers", "empty_hand"}
    for inv in invs:
        assert game.concrete.expr(inv.expr)(st, [None] * (inv.frame + 1)), inv.name


@pytest.mark.parametrize("players", [2, 4])
def test_les_5_tours_invariants_can_fail(players):
    """The base-case check is not vacuous: breaking the state breaks the invariants."""
    game = load_game(GAME, (), (("players", players),))
    fi = game.field_index
    st = list(game.initial())
    deck = list(st[fi["deck"]])
    deck[0] -= 1                                   # a card is lost
    st[fi["deck"]] = tuple(deck)
    towers = list(st[fi["towers"]])
    towers[0] = ((3, 5),) + towers[0][1:]          # 5 on a 3: not a legal stack
    st[fi["towers"]] = tuple(towers)
    st = tuple(st)
    by_name = {i.name: i for i in game.p.invariants}
    assert not holds(game, by_name["whole_deck"], st)
    assert not holds(game, by_name["legal_towers"], st)


def test_a_card_of_a_known_style_touches_only_its_styles_slots():
    """Demolishing the top of one tower writes the pile at a card whose style is known and
    whose value is symbolic: only that style's 16 slots of the pile may change, so the
    inductive step sees the other styles' conservation conjuncts unchanged (and the
    interpreter and z3 still agree: tests/engine/test_differential.py)."""
    from solver.engine import domains as dz
    from solver.engine.symbolic import branches
    g = load_game(GAME)
    st = splits.cases(g, dz.Fresh("s_"), "s")[0]           # the prover's case: player 0 to move
    pile_i = [f for f, _ in g.state_type.fields].index("pile")
    b = next(b for b in branches(g, st, ("demolish",)) if b.params == (0,))
    before, after = st[pile_i], b.state[pile_i]
    changed = {i for p in range(len(before)) for i, (x, y) in enumerate(zip(before[p], after[p]))
               if not (dz.is_sym(x) and dz.is_sym(y) and x.eq(y))}
    assert changed and changed <= set(range(16))


def test_free_variable_memo_is_not_fooled_by_a_reused_z3_id():
    """z3 hands a freed term's id to the next term it builds: a memo keyed by the id alone
    answered for the wrong term, which gave Houdini wrong neighbour sets and so spurious
    counterexamples to induction (Clock Towers' roof_on_clock)."""
    import z3

    x, y = z3.Ints("x y")
    memo: dict = {}
    for k in range(20):
        a = x + k * 7 + 1000
        assert terms.free_vars(a, memo) == frozenset({x.get_id()})
        del a
        b = y * (k + 2000)
        assert terms.free_vars(b, memo) == frozenset({y.get_id()})


# stacks.rules proved with its step split over lengths, 5 s per step query: the options of
# every proof of it below, so that the journal tests resume the first one.
STACKS_RUN = dict(split_lengths=True, step_timeout_ms=5_000)


@pytest.fixture(scope="module")
def stacks_proved(tmp_path_factory):
    """stacks.rules, proved once with a journal: the game, the results by invariant and the
    journal's text (each journal test resumes from a copy of it)."""
    game = load_path(FIXTURES / "stacks.rules")
    journal = tmp_path_factory.mktemp("stacks") / "stacks.journal"
    res = prove(game, ProveOptions(1, TIMEOUT_MS, **STACKS_RUN, journal=str(journal)))
    return game, {r.name: r for r in res}, journal.read_text()


def test_count_over_a_push_at_a_symbolic_length_is_proved_by_splitting_the_length(stacks_proved):
    """A card pushed onto one of several stacks (or a new stack pushed onto the list) lands at a
    symbolic length: z3 gives up on `conserved` as one query, and proves it once the step is
    split over that length (the outer one only, for the list of stacks)."""
    _, res, _ = stacks_proved
    assert res["conserved"].status == "inductive", res["conserved"].detail
    # A transition over the same counts is checked the same way, path by path.
    assert res["never_lost"].kind == "transition"
    assert res["never_lost"].status == "inductive", res["never_lost"].detail


def test_the_inductive_step_is_checked_by_z3s_linear_integer_solver(monkeypatch):
    """The step's queries hold uninterpreted predicates (each `exists real`, read opaquely)
    beside linear integer arithmetic: z3's general solver decided 42 paths of Towers' first
    stored proof in 200 s where the one for linear integer arithmetic decided 1,023, and the
    same elsewhere.  The step's solver is the latter, and its verdicts are the step's."""
    from solver.engine.symbolic import make_solver
    made = []

    def recording(*a, **k):
        made.append(k.get("general", False))
        return make_solver(*a, **k)
    monkeypatch.setattr(induction, "make_solver", recording)
    game = load_path(FIXTURES / "stacks.rules")
    # With the step split over lengths, as every proof of stacks.rules here: unsplit, z3 gave
    # up on the step within the module's 30 s when the machine was busy.
    res = {r.name: r for r in prove(game, ProveOptions(1, TIMEOUT_MS, **STACKS_RUN))}
    assert res["conserved"].status == "inductive", res["conserved"].detail
    assert made[0] is False         # Houdini's solver, made before any path is checked


def test_a_step_z3_gives_up_on_is_retried_one_conjunct_at_a_time(monkeypatch):
    """When z3 gives up on all the conjuncts a path changes at once, each is checked alone:
    proved when every one is, a counterexample when one is false, and still "unknown" when z3
    gives up on a single one.  (z3 giving up is simulated: any query of more than one
    conjunct is "unknown".)"""
    import z3

    from solver.engine.symbolic import Unknown, make_solver
    x = [z3.Int(f"x{i}") for i in range(3)]
    conj = {"inv": [v >= 0 for v in x]}
    readers = {v.get_id(): [("inv", i)] for i, v in enumerate(x)}
    real = tiers.step
    calls = []

    def flaky(local, guard, goal, conj, name, items, *rest):
        calls.append(len(items))
        if len(items) > 1:
            raise Unknown("simulated")
        return real(local, guard, goal, conj, name, items, *rest)
    monkeypatch.setattr(tiers, "step", flaky)

    def step(new):
        items = list(enumerate(new))
        goal = z3.Not(z3.And(new))
        return tiers.step_each(make_solver(5_000), z3.BoolVal(True), goal, conj, "inv", items,
                               readers, ["inv"], {}, False, 5_000)
    # x' = x + 1 keeps every x non-negative: proved conjunct by conjunct.
    assert step([v + 1 >= 0 for v in x]) is None
    assert calls == [3, 1, 1, 1]
    # x1' = x1 - 1 breaks it: the model is a counterexample to induction.
    model = step([x[0] + 1 >= 0, x[1] - 1 >= 0, x[2] >= 0])
    assert model is not None and model.eval(x[1]).as_long() == 0
    # z3 giving up on a lone conjunct is not a proof.
    monkeypatch.setattr(tiers, "step", lambda *a: (_ for _ in ()).throw(Unknown("simulated")))
    with pytest.raises(Unknown):
        step([x[0] + 1 >= 0])


def _readers(conj: dict) -> dict:
    """Each variable -> the (invariant, conjunct index) pairs that read it, as prove builds."""
    readers: dict = {}
    for name, cs in conj.items():
        for k, c in enumerate(cs):
            for v in terms.free_vars(c, {}):
                readers.setdefault(v, []).append((name, k))
    return readers


def _only_small_checks(monkeypatch):
    """z3 simulated as giving up on more than ten assumptions: (the real check, the patched)."""
    from solver.engine.symbolic import Unknown
    real = terms.check_assume

    def small_only(solver, goal):
        if len(goal.children()) > 10:
            raise Unknown("simulated")
        return real(solver, goal)
    monkeypatch.setattr(terms, "check_assume", small_only)
    return real, small_only


def test_the_conjuncts_near_the_changed_ones_are_tried_before_those_near_the_guard(monkeypatch):
    """A conjunct the step changes may need another invariant that reads the same variables
    (y == 0 for x + 2y >= 0 from x + y >= 0), while the path's guard reads a variable many
    conjuncts read (g).  The tier of the changed conjuncts' neighbours proves it; the tier of
    the guard's neighbours alone is too big for z3 (simulated: more than ten assumptions is
    "unknown")."""
    import z3

    from solver.engine.symbolic import Unknown, make_solver
    x, y, g = z3.Ints("x y g")
    zs = [z3.Int(f"z{i}") for i in range(50)]
    conj = {"inv": [x + y >= 0], "zero": [y == 0], "other": [g + z >= 0 for z in zs]}
    readers = _readers(conj)
    real, small_only = _only_small_checks(monkeypatch)
    c2 = x + 2 * y >= 0
    args = (make_solver(5_000), g >= 0, z3.Not(c2), conj, "inv", [(0, c2)], readers,
            list(conj), {}, None, 5_000)
    assert tiers.tiers(*args) is None
    # The tiers around it: the changed conjunct alone has a counterexample (y < 0), and the
    # conjuncts near the guard and goal are more than z3 takes.
    guard, goal = g >= 0, z3.Not(c2)
    assert real(make_solver(5_000), z3.And(guard, goal, conj["inv"][0])) is not None
    near = nearby.near(z3.And(guard, goal), conj, readers, list(conj), {})
    with pytest.raises(Unknown):
        small_only(make_solver(5_000), z3.And(guard, goal, *near))


def test_a_quick_tier_that_proves_nothing_is_no_longer_asked(monkeypatch):
    """Split over a length of capacity 60 (61 cases, each a different query), a conjunct that
    needs another invariant's (y == 0) is proved by the nearby conjuncts only: the two quick
    tiers are asked TIER_SKIP_AFTER times each, then no more.  A tier that proves its cases
    (x >= 0 alone) is asked on every one."""
    import z3

    from solver.engine.symbolic import make_solver
    x, y, n = z3.Ints("x y n")
    lengths = {n.get_id(): (n, 60, 0)}
    asked = []
    real = terms.unsat

    def counted(solver, goal):
        asked.append(1)
        return real(solver, goal)
    monkeypatch.setattr(terms, "unsat", counted)

    def split(conj, c2):
        asked.clear()
        verdict = splits.split_tiers(make_solver(5_000), n >= 0, conj, "inv", [(0, c2)],
                                     _readers(conj), list(conj), {}, lengths, {n.get_id()}, {},
                                     ("act", "inv"))
        return verdict, len(asked)
    needs_y = {"inv": [x + y >= 0], "zero": [y == 0]}
    assert split(needs_y, x + 2 * y >= -n * n) == (None, 2 * splits.TIER_SKIP_AFTER)
    assert split({"inv": [x >= 0]}, x >= -n * n) == (None, 61)


def test_the_conjuncts_about_the_same_few_things_are_tried_first(monkeypatch):
    """A conservation law (shelf + cart + s == 3 per item) changed by a path that empties the
    carts needs two things besides its own conjunct: the same item's law, and, two steps away
    through the item's cart, the bound that a paid order has empty carts (one conjunct over
    every cart: a hub, not followed further).  Every conjunct reads a common s, so all that
    read what the goal reads are more than z3 takes (simulated: more than ten assumptions is
    "unknown"), and they lack the bound anyway; the rarely read variables lead to the three
    conjuncts needed."""
    import z3

    from solver.engine.symbolic import Unknown, make_solver
    n = 20
    shelf = [z3.Int(f"shelf{i}") for i in range(n)]
    cart = [z3.Int(f"cart{i}") for i in range(n)]
    saved = [z3.Int(f"saved{i}") for i in range(n)]
    s, paid = z3.Int("s"), z3.Bool("paid")
    conj = {
        "total": [shelf[i] + cart[i] + s == 3 for i in range(n)],
        "snapshot": [saved[i] + s == 3 for i in range(n)],
        "paid_empty": [z3.Implies(paid, z3.Sum(cart) == 0)],
        "other": [s + z3.Int(f"z{k}") >= 0 for k in range(50)],
    }
    readers = _readers(conj)
    real, small_only = _only_small_checks(monkeypatch)
    i = 7
    c2 = shelf[i] + s == 3          # the snapshot taken after the carts went to the shelves
    goal = z3.Not(c2)
    picked = nearby.rare(z3.And(goal, conj["snapshot"][i]), conj, readers, list(conj), {})
    assert {c.get_id() for c in picked} == {conj["total"][i].get_id(),
                                            conj["snapshot"][i].get_id(),
                                            conj["paid_empty"][0].get_id()}
    local = make_solver(5_000)
    local.add(*[c >= 0 for c in cart])       # the types' bounds, as for a fresh state
    assert tiers.tiers(local, paid, goal, conj, "snapshot", [(i, c2)], readers,
                       list(conj), {}, None, 5_000) is None
    # Without the rare tier, the conjuncts near the goal are too many for z3 (and lack the
    # bound): no proof.
    monkeypatch.setattr(nearby, "rare", lambda *a: [])
    with pytest.raises(Unknown):
        tiers.tiers(local, paid, goal, conj, "snapshot", [(i, c2)], readers, list(conj), {},
                    None, 5_000)


# ---- `exists real` in the step: an uninterpreted predicate, or decided exactly -----------------

@pytest.fixture(scope="module")
def opaque():
    return load_path(FIXTURES / "opaque.rules")


def test_an_invariant_that_holds_for_any_predicate_is_proved_without_real_arithmetic(opaque):
    res = {r.name: r for r in prove(opaque, ProveOptions(3, TIMEOUT_MS))}
    assert res["borne"].status == "inductive"
    # `light` needs what `bears` means: with an uninterpreted `bears`, a load of 3 might be
    # borne, so the step is not proved, and bounded model checking says what it can.
    assert res["light"].status == "holds" and res["light"].depth == 3
    assert "not inductive" in res["light"].detail


def test_exact_reals_prove_what_depends_on_the_statics(opaque):
    res = {r.name: r for r in prove(opaque, ProveOptions(3, TIMEOUT_MS, exact_reals=True))}
    assert res["borne"].status == "inductive" and res["light"].status == "inductive"


def test_the_step_split_on_a_field_reads_it_as_a_number(opaque):
    # With `tries` a number in each case, `bears(tries)` has concrete inputs and is decided
    # exactly, and the predicate at that number is tied to the answer: `light` is proved.
    res = {r.name: r.status for r in prove(opaque,
                                           ProveOptions(3, TIMEOUT_MS, split_on=("tries",)))}
    assert res == {"borne": "inductive", "light": "inductive"}


def test_a_split_field_set_to_a_term_is_a_number_after_the_move_too(opaque):
    # `load` sets w to `tries` when `bears(tries)`: a term.  The step is checked once per value
    # w can take after it, so `bears(w)` after it is decided exactly at that number, and the
    # guard's `bears(tries)`, with tries equal to it, gets the same answer from the predicate's
    # facts at numbers.  Without either, `light` is left to bounded model checking.
    res = {r.name: r.status for r in prove(opaque, ProveOptions(3, TIMEOUT_MS, split_on=("w",)))}
    assert res == {"borne": "inductive", "light": "inductive"}


# ---- `fix` in the step: uninterpreted functions, on request ------------------------------------

@pytest.fixture(scope="module")
def walls():
    return load_path(FIXTURES / "walls.rules")


def test_opaque_fixpoints_prove_what_does_not_depend_on_the_flood(walls):
    """With the floods read as uninterpreted functions, the supply law (which a guard that
    floods does not matter to) is still proved; the law over areas needs what the flood
    computes, so it is left to bounded model checking, which floods for real.  Unrolled, both
    are proved."""
    res = {r.name: r for r in prove(walls, ProveOptions(3, TIMEOUT_MS, opaque_fix=True))}
    assert res["kept"].status == "inductive"
    assert res["low"].status == "holds" and res["low"].depth == 3
    assert "uninterpreted" in res["low"].detail
    plain = {r.name: r.status for r in prove(walls, ProveOptions(3, TIMEOUT_MS))}
    assert plain == {"kept": "inductive", "low": "inductive"}


def test_an_opaque_def_is_one_function_of_its_arguments_at_every_call_site(walls):
    """`area(s)` asked at two call sites of different locals, over the same state, is the
    same term when the argument values are equal (the def's body is one node of the source,
    read as a function of its parameters and the heights), and another one when they
    differ."""
    import z3

    from solver.engine import domains as dz
    from solver.prover.abstractions import Opaque
    S = splits.cases(walls, dz.Fresh("t_"), "t", [])[0]
    with walls.symbolic.abstracted(Opaque(reals=False, fixes=True)):
        f1, _ = walls.expr("area(s)", {"s": walls.p.types["Sq"]}, symbolic=True)
        f2, _ = walls.expr("area(Sq(t.y, t.x))", {"t": walls.p.types["Sq"]}, symbolic=True)
        here, there = f1(S, (1, 2)), f2(S, (2, 1))
        other = f1(S, (0, 0))
    assert z3.is_app(here) and here.decl().kind() == z3.Z3_OP_UNINTERPRETED
    assert here.num_args() > 0 and here.eq(there) and not here.eq(other)


def test_split_on_names_a_scalar_state_field(opaque):
    from solver.lang.errors import RulebookError
    with pytest.raises(RulebookError, match="no state field named 'x'.*w, tries"):
        prove(opaque, ProveOptions(1, TIMEOUT_MS, split_on=("x",)))


# ---- the split fields are numbers after the move as well -----------------------------------------

def test_a_move_that_sets_the_actor_to_a_term_is_one_path_per_value_of_it():
    import z3
    from solver.engine import domains as dz
    from solver.engine.symbolic import branches
    g = load_path(FIXTURES / "handover.rules")
    fields = splits.split_fields(g)
    turn, held = g.field_index["turn"], g.field_index["held"]
    assert fields == [turn]
    S = splits.cases(g, dz.Fresh("s_"), "s", fields)[0]        # turn is 0
    b, = [b for b in branches(g, S) if b.action == "hand_over"]
    assert dz.is_sym(b.state[turn])                          # next_up, a term
    split = splits.split_after(g, b, fields)
    assert sorted(b2.state[turn] for b2 in split) == [0, 1, 2]
    for b2 in split:
        v = b2.state[turn]
        # The term is replaced by the value wherever the successor reads it: v holds the
        # token, 0 gave it up (unless v is 0), and the others are as they were, with no `if`
        # over next_up left.
        after = b2.state[held]
        assert after[v] == 1 and after[0] == (1 if v == 0 else 0)
        assert all(after[p].eq(S[held][p]) for p in range(3) if p not in (0, v))
        # ... under the guard that the term has that value.
        s = z3.Solver()
        s.add(b2.guard, b.state[turn] != v)
        assert s.check() == z3.unsat


def _twelve_conjuncts(monkeypatch):
    """An invariant of twelve conjuncts x_i >= 0 and a path that moves each x_i up by one
    (``new``, to edit), with z3 giving up on more than ten assumptions: (x, new, the sizes of
    the checks of the latest step, and ``step_each(memo, split)`` of that path)."""
    import z3

    from solver.engine.symbolic import make_solver
    x = [z3.Int(f"x{i}") for i in range(12)]
    conj = {"inv": [v >= 0 for v in x]}
    readers = _readers(conj)
    real, small_only = _only_small_checks(monkeypatch)
    sizes: list = []

    def counted(solver, goal):
        sizes.append(len(goal.children()))
        return small_only(solver, goal)
    monkeypatch.setattr(terms, "check_assume", counted)
    new = [v + 1 >= 0 for v in x]

    def step_each(memo, split):
        sizes.clear()
        return tiers.step_each(make_solver(5_000), z3.BoolVal(True), z3.Not(z3.And(new)), conj,
                               "inv", list(enumerate(new)), readers, ["inv"], memo, split,
                               5_000)
    return x, new, sizes, step_each


def test_without_length_splitting_an_action_that_needs_one_conjunct_at_a_time_gets_it_directly(
        monkeypatch):
    """Without --split-lengths, the conjuncts a path changes are tried together briefly; once
    z3 gives up on them for an action, its later paths take them one at a time from the
    start (a bid that deals the market changes one count per card: together they cost the
    whole time-out on every path).  z3 giving up is simulated on more than ten assumptions."""
    x, new, sizes, step_each = _twelve_conjuncts(monkeypatch)
    learned: set = set()

    def step():
        return step_each({}, (None, set(), {}, learned, ("act", "inv")))
    assert step() is None
    assert learned == {("act", "inv")} and max(sizes) > 10     # tried together, gave up
    assert step() is None
    assert sizes and max(sizes) <= 10                           # one at a time directly
    # A path that breaks one conjunct still gives its counterexample.
    new[4] = x[4] - 1 >= 0
    model = step()
    assert model is not None and model.eval(x[4]).as_long() == 0


def test_with_length_splitting_an_action_where_together_gives_up_goes_one_at_a_time(
        monkeypatch):
    """With --split-lengths (the prover's own first pass), the conjuncts a path changes are
    tried together within QUICK_MS; on an action where z3 gave up on that JOINT_MISSES times,
    most of its latest tries, the later paths take them one at a time directly (Towers'
    `place` under the physical collapse: 2 s of a 5.6 s path).  Another action still tries
    them together.  z3 giving up is simulated on more than ten assumptions."""
    x, new, sizes, step_each = _twelve_conjuncts(monkeypatch)
    memo: dict = {}

    def step(action="act"):
        return step_each(memo, ([], set(), {}, set(), (action, "inv")))
    for _ in range(tiers.JOINT_MISSES):
        assert step() is None and max(sizes) > 10           # tried together, gave up
    assert step() is None and sizes and max(sizes) <= 10    # one at a time directly
    assert step("other") is None and max(sizes) > 10
    new[4] = x[4] - 1 >= 0
    model = step()
    assert model is not None and model.eval(x[4]).as_long() == 0


def test_terms_of_a_sum_that_equal_their_old_versions_whatever_the_values_are_put_back():
    """A count over a stack that a card of another value was pushed onto is the same count,
    slot by slot: only the hand's term is left changed.  With a card of the counted value the
    slot at the old length differs, and nothing is put back."""
    import z3

    n, h = z3.Ints("n h")
    s = [z3.Int(f"s{i}") for i in range(6)]

    def law(length, slots, hand):
        return z3.Sum([z3.If(z3.And(i < length, slots[i] == 3), 1, 0)
                       for i in range(6)] + [hand]) == 5
    old = law(n, s, h)

    def pushed(v):
        return law(n + 1, [z3.If(n == i, v, s[i]) for i in range(6)], h - 1)
    assert sameterms.same_terms(old, pushed(7)).eq(law(n, s, h - 1))
    assert sameterms.same_terms(old, pushed(3)).eq(pushed(3))


def _count_of_threes():
    """A conservation law over a sequence of six slots and its length: the 3s among the first
    ``length`` slots plus ``h`` make 5; its unknowns and the law as a function of length and
    slots."""
    import z3
    n, h = z3.Ints("n h")
    s = [z3.Int(f"s{i}") for i in range(6)]

    def law(length, slots):
        return z3.Sum([z3.If(z3.And(i < length, slots[i] == 3), 1, 0)
                       for i in range(6)] + [h]) == 5
    return n, h, s, law


def test_a_reduction_that_found_nothing_on_an_action_is_tried_only_when_the_step_needs_it(
        monkeypatch):
    """Once `sameterms.same_terms` found nothing on SAME_TERM_MISSES paths of an action, a later
    path's conjunct is checked as it is first, and reduced only when z3 gives up on that: then a
    reduction that makes it its old version (true by assumption) still proves it.  An action
    where z3 gave up on most such checks is reduced first again, and so is one where the
    reduction has not yet found nothing three times."""
    import z3

    from solver.engine.symbolic import Unknown, make_solver
    n, h, s, law = _count_of_threes()
    old = law(n, s)
    conj = {"inv": [old]}
    readers = _readers(conj)
    reduced, asked = [], []
    real_same, real_tiers = sameterms.same_terms, tiers.tiers

    def same(c1, c2):
        reduced.append(c2)
        return real_same(c1, c2)

    def tiered(local, guard, goal, *rest):
        asked.append(goal)
        if any(z3.Not(x).eq(goal) for x in fails):
            raise Unknown("simulated")
        return real_tiers(local, guard, goal, *rest)
    monkeypatch.setattr(sameterms, "same_terms", same)
    monkeypatch.setattr(tiers, "tiers", tiered)
    memo: dict = {}
    fails: list = []

    def step(c2, action="act"):
        reduced.clear()
        asked.clear()
        return tiers.step(make_solver(5_000), z3.BoolVal(True), z3.Not(c2), conj, "inv",
                          [(0, c2)], readers, ["inv"], memo,
                          (None, set(), {}, set(), (action, "inv")), 5_000)
    # Slot m rewritten with its own value: one term differs, which is no reduction (a lone
    # differing term is the change itself); the law holds as it is.
    renamed = [law(n, [z3.If(n == m, s[m], s[i]) if i == m else s[i] for i in range(6)])
               for m in range(5)]
    for c2 in renamed[:tiers.SAME_TERM_MISSES]:
        assert step(c2) is None and len(reduced) == 1      # reduced first, nothing found
    assert step(renamed[3]) is None and not reduced and len(asked) == 1
    # A pushed card of another value: only the reduction (to the old law) settles it here.
    pushed = law(n + 1, [z3.If(n == i, 7, s[i]) for i in range(6)])
    fails.append(pushed)
    assert step(pushed) is None and len(reduced) == 1 and len(asked) == 1
    # Given up on as it is on most of the action's paths (three here): reduced first again.
    for v in (9, 10, 11):
        c2 = law(n + 1, [z3.If(n == i, v, s[i]) for i in range(6)])
        fails.append(c2)
        assert step(c2) is None and len(reduced) == 1 and len(asked) == (1 if v < 11 else 0)
    # On another action the reduction found something: it stays first.
    other = law(n + 1, [z3.If(n == i, 8, s[i]) for i in range(6)])
    fails.append(other)
    assert step(other, "other") is None and len(reduced) == 1 and not asked
    assert step(renamed[4], "other") is None and len(reduced) == 1


def test_pairs_an_assignment_tells_apart_are_no_identities_and_need_no_solver(monkeypatch):
    """`sameterms.untold` keeps only the pairs of terms that no seeded assignment tells apart: the
    counts of two squares differ when one holds the counted piece, while a slot rewritten only
    past a length is the same term.  When every pair is told apart, `sameterms.same_terms` asks
    no solver at all."""
    import z3

    a, b, n, s0 = z3.Ints("a b n s0")
    told = (z3.If(a == 1, 1, 0), z3.If(b == 1, 1, 0))
    same = (z3.If(z3.And(0 < n, s0 == 3), 1, 0),
            z3.If(z3.And(0 < n + 1, z3.If(n == 0, 7, s0) == 3), 1, 0))
    rest = sameterms.untold([told, same])
    assert len(rest) == 1 and rest[0][0].eq(same[0]) and rest[0][1].eq(same[1])

    def no_solver():
        raise AssertionError("the solver was asked")
    monkeypatch.setattr(sameterms, "same_solver", no_solver)
    c = [z3.Int(f"c{i}") for i in range(3)]
    old = z3.Sum([z3.If(x == 1, 1, 0) for x in c]) == 1
    moved = z3.Sum([z3.If(x == 1, 1, 0) for x in (c[1], c[0], c[2])]) == 1
    assert sameterms.same_terms(old, moved).eq(moved)


def test_a_predicate_asked_of_arguments_the_path_leaves_equal_is_proved_argument_by_argument():
    """`tiers._congruent`: the new conjunct is the old predicate asked of new arguments; it holds
    when the path's guard makes each argument equal to the old one, and nothing is concluded
    when one may differ or the conjuncts are not one predicate."""
    import z3

    from solver.engine.symbolic import make_solver
    a, a2, b, c = z3.Ints("a a2 b c")
    stands = z3.Function("stands", z3.IntSort(), z3.IntSort(), z3.BoolSort())
    local = make_solver(5_000, general=True)
    old, new = stands(a, b), stands(z3.If(c > 0, a2, a), b + 0 * c)

    def congruent(guard, o=old, n=new):
        return tiers._congruent(local, guard, o, n, {}, {}, [], {}, 5_000)
    assert congruent(a2 == a)
    assert congruent(c <= 0)
    assert not congruent(z3.BoolVal(True))          # a2 may differ from a
    assert not congruent(a2 == a, stands(a, b), stands(a, b + 1))
    assert not congruent(a2 == a, a > 0, a2 > 0)    # no predicate


def test_pairs_told_apart_through_an_uninterpreted_function():
    """`sameterms.untold` reads an uninterpreted predicate (an `exists real`, an opaque fixpoint)
    as a constant function: a count of what stands after a collapse differs from the count
    before when the predicate holds and the block is another, and is kept only when the terms
    agree under every interpretation it draws."""
    import z3

    a, b = z3.Ints("a b")
    stands = z3.Function("stands", z3.IntSort(), z3.BoolSort())
    told = (z3.If(stands(a), 1, 0), z3.If(z3.And(stands(a), b == 7), 1, 0))
    same = (z3.If(stands(a), 1, 0), z3.If(stands(a + 0 * b), 1, 0))
    rest = sameterms.untold([told, same])
    assert len(rest) == 1 and rest[0][0].eq(same[0]) and rest[0][1].eq(same[1])
    # The solver, in a context of its own, finds the identity the assignments keep.
    c = z3.Ints("c0 c1")
    old = z3.Sum([z3.If(stands(x), 1, 0) for x in c] + [a]) == 1
    new = z3.Sum([z3.If(stands(c[0] + 0 * b), 1, 0), z3.If(z3.And(stands(c[1]), b == 7), 1, 0),
                  a + 1]) == 1
    reduced = sameterms.same_terms(old, new)
    assert reduced.eq(z3.Sum([z3.If(stands(c[0]), 1, 0),
                              z3.If(z3.And(stands(c[1]), b == 7), 1, 0), a + 1]) == 1)


def test_identities_z3_gives_up_on_are_not_asked_one_by_one_for_long(monkeypatch):
    """When z3 gives up on the terms of a sum together and then on SAME_TERM_GIVE_UPS of them
    one at a time, the rest are left as they are: nothing is assumed, and the solver is not
    asked about each (a count over a collapsed tower's slots, 7.5 s a conjunct)."""
    import z3

    asked = []

    class GivingUp:
        ctx = z3.Context()

        def reset(self):
            pass

        def add(self, formula):
            pass

        def check(self):
            asked.append(1)
            return z3.unknown

        def reason_unknown(self):
            return "canceled"
    monkeypatch.setattr(sameterms, "same_solver", GivingUp)
    monkeypatch.setattr(sameterms, "untold", lambda pairs: pairs)
    c = z3.Ints("c0 c1 c2 c3 c4 c5")
    old = z3.Sum([z3.If(x == 1, 1, 0) for x in c]) == 1
    new = z3.Sum([z3.If(x == 2, 1, 0) for x in c]) == 1
    assert sameterms.same_terms(old, new).eq(new)
    assert len(asked) == 1 + sameterms.SAME_TERM_GIVE_UPS


def _paths_checked(monkeypatch, by_round=False) -> list:
    """The action paths the inductive step checks from now on (not those a journal gave):
    one flat list, or with `by_round` the actions each call checks, a list a call."""
    checked: list = []
    real = induction._check_paths

    def spy(game, S, work, *a, **k):
        if by_round:
            checked.append([b.action for _, (b, *_) in work])
        else:
            checked.extend(work)
        return real(game, S, work, *a, **k)
    monkeypatch.setattr(induction, "_check_paths", spy)
    return checked


def _builds(monkeypatch) -> list:
    """One entry for each time the prover builds a case's action paths from now on."""
    built: list = []
    real = splits.branches
    monkeypatch.setattr(splits, "branches", lambda *a, **k: built.append(1) or real(*a, **k))
    return built


def test_a_journal_lets_a_second_run_skip_the_paths_the_first_checked(toy, tmp_path,
                                                                      monkeypatch):
    journal = tmp_path / "toy.journal"
    first = {r.name: r for r in prove(toy,
                                      ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)))}
    lines = journal.read_text().splitlines()
    assert len(lines) > 1 and '"journal"' in lines[0]
    checked = _paths_checked(monkeypatch)
    said = []
    again = {r.name: r for r in prove(toy,
                                      ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)),
                                      progress=said.append)}
    assert checked == []                                # every path came from the journal
    assert any("checked by a previous run" in m for m in said)
    assert {n: (r.status, r.detail) for n, r in again.items()} == \
        {n: (r.status, r.detail) for n, r in first.items()}
    # not_eight fell in the first round: its reason came back from the journal.
    assert "where dec() breaks it" in again["not_eight"].detail
    # A run stopped part-way: only the paths it did not record are checked.
    # (A run stopped part-way has not marked the case done either.)
    steps = [x for x in lines if '"transition' not in x and '"kind": "case"' not in x]
    journal.write_text("\n".join(steps[:-2]) + "\n")
    resumed = {r.name: r for r in prove(toy,
                                        ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)))}
    assert len(checked) == 2
    assert {n: (r.status, r.detail) for n, r in resumed.items()} == \
        {n: (r.status, r.detail) for n, r in first.items()}


def test_a_journal_lets_a_resumed_run_skip_building_a_case_whose_paths_all_held(
        toy, tmp_path, monkeypatch):
    """A case whose every path held every candidate is recorded as such: the next run does
    not build it.  A round where a candidate fell records nothing of the kind, so that
    round's case is built again (and its paths come from the journal)."""
    import json
    journal = tmp_path / "toy.journal"
    alone = {r.name: (r.status, r.detail)
             for r in prove(toy,
                            ProveOptions(BMC_DEPTH, TIMEOUT_MS, only=("even",), alone=True,
                                         journal=str(journal)))}
    assert alone["even"][0] == "inductive"
    cases = [json.loads(x) for x in journal.read_text().splitlines()[1:]
             if '"kind": "case"' in x]
    assert [(c["case"], c["candidates"]) for c in cases] == [(0, ["even"])]
    assert cases[0]["paths"] > 0
    built = _builds(monkeypatch)
    said = []
    again = {r.name: (r.status, r.detail)
             for r in prove(toy,
                            ProveOptions(BMC_DEPTH, TIMEOUT_MS, only=("even",), alone=True,
                                         journal=str(journal)), progress=said.append)}
    assert again == alone and built == []
    assert any("every path checked by a previous run" in m for m in said)
    # not_eight falls in the first round of the whole set: that round's case is built.
    journal2 = tmp_path / "all.journal"
    first = {r.name: (r.status, r.detail)
             for r in prove(toy, ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal2)))}
    marks = [json.loads(x)["candidates"] for x in journal2.read_text().splitlines()[1:]
             if '"kind": "case"' in x]
    assert marks and all("not_eight" not in c for c in marks)
    resumed = {r.name: (r.status, r.detail)
               for r in prove(toy, ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal2)))}
    assert resumed == first and built


def test_a_journal_of_another_run_is_not_used(toy, tmp_path, monkeypatch):
    journal = tmp_path / "toy.journal"
    prove(toy, ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)))
    # A line cut short by a kill is skipped; the others still count.
    with open(journal, "a") as f:
        f.write('{"case": 0, "pa')
    said = []
    prove(toy, ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)), progress=said.append)
    assert not any("another run" in m for m in said)
    checked = _paths_checked(monkeypatch)
    said.clear()
    res = {r.name: r.status for r in prove(toy,
                                           ProveOptions(BMC_DEPTH, TIMEOUT_MS,
                                                        step_timeout_ms=4_000,
                                                        journal=str(journal)),
                                           progress=said.append)}
    assert any("is of another run" in m for m in said)
    assert checked                                      # checked afresh
    assert res["even"] == "inductive" and res["not_eight"] == "holds"


def test_a_journal_outlives_a_changed_example_but_not_a_changed_rule(tmp_path, monkeypatch):
    """A journal names the spec by what the proof reads (its rules, invariants and
    transitions): an example changed since leaves it current, so a proof of hours is not
    started again for it; a changed rule makes it another run's."""
    text = (FIXTURES / "toy.rules").read_text("utf-8")
    journal = tmp_path / "toy.journal"
    (tmp_path / "a.rules").write_text(text, "utf-8")
    first = {r.name: r.status for r in prove(load_path(tmp_path / "a.rules"),
                                             ProveOptions(BMC_DEPTH, TIMEOUT_MS,
                                                          journal=str(journal)))}
    (tmp_path / "b.rules").write_text(text.replace("expect n == 3;", "expect n != 4;"), "utf-8")
    checked = _paths_checked(monkeypatch)
    said: list = []
    again = {r.name: r.status for r in prove(load_path(tmp_path / "b.rules"),
                                             ProveOptions(BMC_DEPTH, TIMEOUT_MS,
                                                          journal=str(journal)),
                                             progress=said.append)}
    assert again == first and checked == []
    assert not any("another run" in m for m in said)
    (tmp_path / "c.rules").write_text(text.replace("m <= 8", "m <= 7"), "utf-8")
    prove(load_path(tmp_path / "c.rules"),
          ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)), progress=said.append)
    assert any("is of another run" in m for m in said) and checked


def test_a_journal_keeps_no_time_out(toy, tmp_path, monkeypatch):
    """A path z3 timed out on is not recorded, nor does a later path that therefore left a
    candidate out count: the next run checks them again, and decides."""
    from solver.engine.symbolic import Unknown
    journal = tmp_path / "toy.journal"
    real_step = tiers.step_each

    def slow(local, guard, goal, conj, name, *a, **k):
        if name == "not_eight":
            raise Unknown("time-out")
        return real_step(local, guard, goal, conj, name, *a, **k)
    monkeypatch.setattr(tiers, "step_each", slow)
    loaded = {r.name: r for r in prove(toy,
                                       ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)))}
    assert "z3 gave up" in loaded["not_eight"].detail
    monkeypatch.setattr(tiers, "step_each", real_step)
    checked = _paths_checked(monkeypatch)
    calm = {r.name: r for r in prove(toy,
                                     ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)))}
    assert "where dec() breaks it" in calm["not_eight"].detail
    assert checked                          # the time-out's path and those after it, again
    assert calm["even"].status == "inductive"


def test_with_a_journal_a_timed_out_candidate_is_still_checked_on_later_paths(
        toy, tmp_path, monkeypatch):
    """not_eight times out on its second path (dec) only: with a journal the later paths of
    that round still check it (their records leave out only `small`, which inc broke), so
    the next run's first round asks z3 about dec's path alone; its second round finds dec
    breaking not_eight, as a run without the time-out does.  (A record that left a candidate
    out is tested on a journal below.)"""
    import json
    from solver.engine.symbolic import Unknown
    journal = tmp_path / "toy.journal"
    real_step = tiers.step_each
    asked = []

    def flaky(local, guard, goal, conj, name, *a, **k):
        if name == "not_eight":
            asked.append(1)
            if len(asked) == 2:
                raise Unknown("time-out")
        return real_step(local, guard, goal, conj, name, *a, **k)
    monkeypatch.setattr(tiers, "step_each", flaky)
    loaded = {r.name: r for r in prove(toy,
                                       ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)))}
    assert "z3 gave up" in loaded["not_eight"].detail
    first = {r["action"]: r for r in map(json.loads, journal.read_text().splitlines()[1:])
             if r.get("kind", "step") == "step" and "not_eight" in r["candidates"]}
    # The time-out's path is not recorded; the later ones were checked for not_eight.
    assert sorted(first) == ["climb", "inc", "jump"] and "small" in first["inc"]["fell"]
    assert first["climb"]["skipped"] == first["jump"]["skipped"] == ["small"]
    monkeypatch.setattr(tiers, "step_each", real_step)
    rounds = _paths_checked(monkeypatch, by_round=True)
    calm = {r.name: r for r in prove(toy,
                                     ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)))}
    assert rounds[0] == ["dec"]
    assert calm["not_eight"].status == "holds"
    assert "where dec() breaks it" in calm["not_eight"].detail
    assert calm["even"].status == "inductive"


def test_a_journalled_path_that_left_out_a_candidate_counts_only_if_that_one_falls(tmp_path):
    from solver.prover.journal import Journal
    path = tmp_path / "j"
    key = {"run": 1, "params": [("players", 2)]}    # a tuple reads back as a list
    j = Journal(path, key, lambda m: None)
    cands = ["a", "b", "c"]
    j.record(0, 0, "x", cands, {"a": "broken"}, [])
    j.record(0, 1, "y", cands, {}, ["a"])            # a fell before: not checked here
    j.record(0, 2, "x", cands, {}, ["b"])            # b timed out before (not recorded)
    j.record(0, 3, "y", ["a", "b"], {}, [])          # another round
    said = []
    again = Journal(path, key, said.append)
    assert again.checked(0, ["x", "y", "x", "y"], cands) == {0: {"a": "broken"}, 1: {}}
    assert again.checked(0, ["x", "y", "x", "y"], ["b", "a"]) == {3: {}}
    assert again.checked(1, ["x", "y", "x", "y"], cands) == {}
    # Paths in another order are another run's: none is used.
    assert again.checked(0, ["y", "x", "x", "y"], cands) == {}
    assert any("not this run's" in m for m in said)
    # Another key: the journal starts afresh.
    fresh = Journal(path, {"run": 2}, said.append)
    assert fresh.checked(0, ["x", "y", "x", "y"], cands) == {}
    assert path.read_text().count("\n") == 1


def _transition_lines(journal) -> list:
    import json
    return [r for r in map(json.loads, journal.read_text().splitlines()[1:])
            if r.get("kind") == "transition"]


def test_a_journal_keeps_the_transition_verdicts_too(toy, tmp_path, monkeypatch):
    """The transition properties' paths are journalled like the invariants': a second run
    asks z3 nothing in the inductive step, and gives the same verdicts."""
    journal = tmp_path / "toy.journal"
    first = {r.name: r for r in prove(toy,
                                      ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)))}
    trans = _transition_lines(journal)
    assert trans and all(set(r["verdicts"]) <= {"m_grows", "n_grows"} for r in trans)
    assert {r["action"] for r in trans if r["verdicts"].get("n_grows")} == {"dec"}

    def no_z3(*a, **k):
        raise AssertionError("the journal had this path")
    monkeypatch.setattr(terms, "check_assume", no_z3)
    monkeypatch.setattr(tiers, "step_each", no_z3)
    said = []
    again = {r.name: r for r in prove(toy,
                                      ProveOptions(BMC_DEPTH, TIMEOUT_MS, journal=str(journal)),
                                      progress=said.append)}
    assert any("decided by a previous run" in m for m in said)
    assert {n: (r.status, r.detail) for n, r in again.items()} == \
        {n: (r.status, r.detail) for n, r in first.items()}


def test_a_journal_lets_a_resumed_run_skip_building_a_case_whose_transitions_all_held(
        toy, tmp_path, monkeypatch):
    """A case whose every path held every transition property is recorded whole: the next
    run builds no case at all (the invariants' cases are marked too).  A case where a
    property failed is not marked, and is built again."""
    import json
    journal = tmp_path / "toy.journal"
    run = dict(only=("even", "m_grows"), alone=True, journal=str(journal))
    first = {r.name: (r.status, r.detail) for r in prove(toy,
                                                         ProveOptions(BMC_DEPTH, TIMEOUT_MS,
                                                                      **run))}
    assert first["m_grows"][0] == "inductive"
    marks = [json.loads(x) for x in journal.read_text().splitlines()[1:]
             if '"transition-case"' in x]
    assert [(m["case"], m["assumed"], m["properties"]) for m in marks] == \
        [(0, ["even"], ["m_grows"])]
    built = _builds(monkeypatch)
    said = []
    again = {r.name: (r.status, r.detail)
             for r in prove(toy, ProveOptions(BMC_DEPTH, TIMEOUT_MS, **run), progress=said.append)}
    assert again == first and built == []
    assert any("every path held in a previous run" in m for m in said)
    # n_grows fails on dec: nothing marks its case, which the next run builds again.
    journal2 = tmp_path / "fails.journal"
    run2 = dict(only=("even", "n_grows"), alone=True, journal=str(journal2))
    failed = {r.name: (r.status, r.detail) for r in prove(toy,
                                                          ProveOptions(BMC_DEPTH, TIMEOUT_MS,
                                                                       **run2))}
    assert failed["n_grows"][0] != "inductive"
    assert '"transition-case"' not in journal2.read_text()
    built.clear()
    assert {r.name: (r.status, r.detail)
            for r in prove(toy, ProveOptions(BMC_DEPTH, TIMEOUT_MS, **run2))} == failed
    assert built


def test_a_journal_keeps_no_transition_time_out(tmp_path, monkeypatch, stacks_proved):
    """A transition path z3 gave up on is not recorded: the next run checks it again, and
    proves the property (stacks.rules' never_lost, a count over a pushed stack)."""
    from solver.engine.symbolic import Unknown
    game, _, journalled = stacks_proved
    journal = tmp_path / "stacks.journal"
    run = dict(STACKS_RUN, journal=str(journal))
    lines = journalled.splitlines()
    journal.write_text("\n".join(x for x in lines if '"transition' not in x) + "\n")

    def gives_up(*a, **k):
        raise Unknown("time-out")
    real = terms.check_assume
    monkeypatch.setattr(terms, "check_assume", gives_up)
    monkeypatch.setattr(tiers, "step_each", gives_up)
    loaded = {r.name: r for r in prove(game, ProveOptions(1, TIMEOUT_MS, **run))}
    assert "z3 gave up" in loaded["never_lost"].detail
    # Only the paths z3 was not asked about (no conjunct left to check) are recorded.
    kept = _transition_lines(journal)
    assert all(v is None for r in kept for v in r["verdicts"].values())
    asked = []

    def spy(*a, **k):
        asked.append(1)
        return real(*a, **k)
    monkeypatch.undo()
    monkeypatch.setattr(terms, "check_assume", spy)
    calm = {r.name: r for r in prove(game, ProveOptions(1, TIMEOUT_MS, **run))}
    assert calm["never_lost"].status == "inductive", calm["never_lost"].detail
    assert asked and len(_transition_lines(journal)) > len(kept)


def test_with_a_journal_a_transition_z3_gave_up_on_is_still_checked_on_later_paths(
        tmp_path, monkeypatch, stacks_proved):
    """z3 gives up on the first path of stacks.rules' never_lost it is asked about: the
    property is not proved, but the later paths are still checked and journalled, so that
    the next run asks z3 about that one path only, and proves it."""
    from solver.engine.symbolic import Unknown
    game, _, journalled = stacks_proved                     # Houdini's paths, journalled
    journal = tmp_path / "stacks.journal"
    run = dict(STACKS_RUN, journal=str(journal))
    lines = journalled.splitlines()
    journal.write_text("\n".join(x for x in lines if '"transition' not in x) + "\n")
    real_check, real_step = terms.check_assume, tiers.step_each
    calls = {"check": 0, "step": 0}

    def check(*a, **k):
        # The first path: the brief query and the last one with the whole time-out.
        calls["check"] += 1
        if calls["check"] <= 2:
            raise Unknown("time-out")
        return real_check(*a, **k)

    def step(*a, **k):
        calls["step"] += 1
        if calls["step"] == 1:
            raise Unknown("time-out")
        return real_step(*a, **k)
    monkeypatch.setattr(terms, "check_assume", check)
    monkeypatch.setattr(tiers, "step_each", step)
    loaded = {r.name: r for r in prove(game, ProveOptions(1, TIMEOUT_MS, **run))}
    assert "z3 gave up" in loaded["never_lost"].detail
    decided = [r for r in _transition_lines(journal) if "never_lost" in r["verdicts"]]
    assert decided and calls["step"] > 1            # paths after the time-out's were checked
    monkeypatch.undo()
    before = len(_transition_lines(journal))
    calm = {r.name: r for r in prove(game, ProveOptions(1, TIMEOUT_MS, **run))}
    assert calm["never_lost"].status == "inductive", calm["never_lost"].detail
    assert len(_transition_lines(journal)) == before + 1      # that one path, now decided


def test_journalled_transition_verdicts_count_for_the_same_assumptions_only(tmp_path):
    from solver.prover.journal import Journal
    path = tmp_path / "j"
    j = Journal(path, {"run": 1}, lambda m: None)
    j.record_transition(0, 0, "x", ["b", "a"], {"p": None})
    j.record_transition(0, 1, "y", ["a", "b"], {"p": "broken", "q": None})
    j.record_transition(0, 1, "y", ["a"], {"q": "broken"})       # other assumptions
    j.record(0, 0, "x", ["p"], {}, [])                            # an invariant's path
    said = []
    again = Journal(path, {"run": 1}, said.append)
    assert again.transitions_checked(0, ["x", "y"], {"a", "b"}) == \
        {0: {"p": None}, 1: {"p": "broken", "q": None}}
    assert again.transitions_checked(0, ["x", "y"], ["a"]) == {1: {"q": "broken"}}
    assert again.transitions_checked(1, ["x", "y"], ["a", "b"]) == {}
    assert again.checked(0, ["x", "y"], ["p"]) == {0: {}}
    assert again.transitions_checked(0, ["y", "x"], ["a", "b"]) == {}
    assert any("not this run's" in m for m in said)


def test_a_merged_leaf_is_the_conditional_z3_builds_and_equal_leaves_need_none():
    """Symbolic execution joins leaves with `leaf_ite`, which builds the conditional through
    z3's C API: it must mean what z3.If means, for every mix of terms and Python constants
    (a sort mismatch, Real against Int, is left to z3.If's coercion)."""
    import z3
    from solver.engine.domains import leaf_ite
    c, b = z3.Bools("c b")
    i, j, r = z3.Int("i"), z3.Int("j"), z3.Real("r")
    for x, y in [(i, j), (i, 3), (3, i), (True, b), (b, False), (r, i), (r, 1), (i, i + 1)]:
        got = leaf_ite(c, x, y)
        s = z3.Solver()
        s.add(got != z3.If(c, x, y))
        assert s.check() == z3.unsat, (x, y, got)
    assert leaf_ite(c, i, i + 0).eq(z3.If(c, i, i + 0))       # not the same term: kept
    assert leaf_ite(c, 3, z3.IntVal(3)).eq(z3.IntVal(3))      # the same value: no conditional
    assert leaf_ite(c, i, i) is i and leaf_ite(True, i, j) is i and leaf_ite(False, i, j) is j


def test_checks_as_they_are_stop_once_z3_gives_up_on_the_latest(monkeypatch):
    """The checks as they are stop after a few give-ups in a row, however many checks of the
    action were proved before (Tours de pouvoir's `build`: 79 proved on the first path, then
    each conjunct of the next paths given up on, and reduced first only after 40 of them)."""
    import z3

    from solver.engine.symbolic import Unknown, make_solver
    n, h, s, law = _count_of_threes()
    conj = {"inv": [law(n, s)]}
    readers = _readers(conj)
    asked: list = []
    fails: list = []
    real_tiers = tiers.tiers

    def tiered(local, guard, goal, *rest):
        asked.append(goal)
        if any(z3.Not(x).eq(goal) for x in fails):
            raise Unknown("simulated")
        return real_tiers(local, guard, goal, *rest)
    monkeypatch.setattr(tiers, "tiers", tiered)
    memo: dict = {}

    def step(c2):
        return tiers.step(make_solver(5_000), z3.BoolVal(True), z3.Not(c2), conj, "inv",
                          [(0, c2)], readers, ["inv"], memo,
                          (None, set(), {}, set(), ("act", "inv")), 5_000)
    renamed = [law(n, [z3.If(n == m, s[m], s[i]) if i == m else s[i] for i in range(6)])
               for m in range(5)]
    for c2 in renamed * 4:          # found nothing three times, then 17 checks as they are
        assert step(c2) is None
    assert len(asked) == 4 * len(renamed)
    tries = []
    for v in range(7, 17):
        c2 = law(n + 1, [z3.If(n == i, v, s[i]) for i in range(6)])
        fails.append(c2)
        asked.clear()
        assert step(c2) is None             # the reduction proves each
        tries.append(len(asked))
    # Checked as they are until z3 gave up on the latest three (of four), then reduced first.
    assert tries == [1, 1, 1] + [0] * 7


def test_a_fixpoint_past_its_budget_is_read_as_uninterpreted_functions(walls):
    """With no time at all to unroll a `fix` (budget 0), the floods of `area` are read as
    uninterpreted functions once the first one is begun: the supply law is still proved, and
    the law over areas, which the flood decides, is not refuted by the coarser reading's
    counterexample: z3 is said to have given up (left to bounded model checking).  A budget
    the unrolling keeps to changes nothing."""
    res = {r.name: r for r in prove(walls, ProveOptions(3, TIMEOUT_MS, fix_budget_ms=0))}
    assert res["kept"].status == "inductive"
    assert res["low"].status == "holds" and res["low"].depth == 3
    assert "gave up" in res["low"].detail and "uninterpreted" in res["low"].detail
    roomy = {r.name: r.status for r in prove(walls, ProveOptions(3, TIMEOUT_MS,
                                                                 fix_budget_ms=600_000))}
    assert roomy == {"kept": "inductive", "low": "inductive"}


def test_the_paths_built_with_a_fixpoint_past_its_budget_are_marked(walls):
    from solver.engine import domains as dz
    from solver.engine.symbolic import branches
    from solver.prover.abstractions import Opaque
    S = splits.cases(walls, dz.Fresh("t_"), "t", [])[0]
    with walls.symbolic.abstracted(Opaque(reals=False, budget_ms=0)):
        coarse = branches(walls, S)
    with walls.symbolic.abstracted(Opaque(reals=False, budget_ms=600_000)):
        exact = branches(walls, S)
    assert len(coarse) == len(exact) == 9
    assert all(not b.approx for b in exact)
    # The first square's flood is the first one begun: from there on, every path.
    assert [b.approx for b in coarse] == [True] * 9


def test_a_fixpoint_that_owns_its_unrolling_is_read_coarsely_past_the_budget(walls):
    """`castle(s)` alone: the `fix` is the outermost node being unrolled, the one whose budget
    runs out at its first step; it is then read as uninterpreted functions, not unrolled
    again."""
    import z3

    from solver.engine import domains as dz
    from solver.prover.abstractions import Opaque

    def castle(budget_ms):
        # A state of its own: the evaluator remembers a def's value per state.
        S = splits.cases(walls, dz.Fresh("t_"), "t", [])[0]
        reading = Opaque(reals=False, budget_ms=budget_ms)
        with walls.symbolic.abstracted(reading):
            f, _ = walls.expr("castle(s)", {"s": walls.p.types["Sq"]}, symbolic=True)
            return f(S, (1, 1)), reading.approximations()

    def uninterpreted(v):
        return any(z3.is_app(x) and x.decl().kind() == z3.Z3_OP_UNINTERPRETED for x in v)
    coarse, n = castle(0)
    exact, m = castle(600_000)
    assert n == 1 and uninterpreted(coarse)
    assert m == 0 and not uninterpreted(exact)


def test_a_fixpoint_budget_beside_opaque_fixpoints_is_refused(walls, tmp_path):
    """The budget only ever reads an unrolled fixpoint coarsely: asked for beside a reading
    that unrolls none, it would be ignored, so it is refused (exit 2 on the command line)."""
    with pytest.raises(RulebookError, match="fixpoint budget"):
        prove(walls, ProveOptions(1, TIMEOUT_MS, opaque_fix=True, fix_budget_ms=1000))
    r = run_cli("prove", str(FIXTURES / "walls.rules"), "--opaque-fix", "--fix-budget", "5",
                "--no-store")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "fixpoint budget" in r.stderr


def test_the_transition_pass_starts_from_the_steps_own_states():
    """The transition properties' pass makes the inductive step's states, the very same z3
    terms, so that what the evaluator keeps by term (the floods it unrolled for the step's
    paths) serves the pass's paths too: a flood of the same board is not unrolled twice."""
    from solver.engine.values import identical
    from solver.prover.transitions import Pass
    g = load_path(FIXTURES / "regions.rules")
    options = ProveOptions(1, TIMEOUT_MS)
    invs = [i for i in g.p.invariants if not i.transition]
    trans = [i for i in g.p.invariants if i.transition]
    step = induction.Step(g, invs, options, lambda *a, **k: None)
    p = Pass(g, trans, {i.name for i in invs}, options)
    assert len(step.cases) == len(p.cases) > 0
    assert all(identical(case[0], S) for case, S in zip(step.cases, p.cases))


def test_the_transition_pass_takes_the_steps_paths_built_under_its_reading(monkeypatch):
    """Under one reading of the step (a pass of a proof: `abstractions.for_step`), the
    transition properties' pass finds the paths the inductive step built from the same
    states instead of building them again: the very same paths, and no action expanded a
    second time.  Under the exact reading, which every evaluator shares, nothing is kept."""
    from solver.prover import abstractions
    from solver.prover.transitions import Pass
    g = load_path(FIXTURES / "regions.rules")
    options = ProveOptions(1, TIMEOUT_MS)
    invs = [i for i in g.p.invariants if not i.transition]
    trans = [i for i in g.p.invariants if i.transition]
    expanded = []
    real = splits.branches
    monkeypatch.setattr(splits, "branches",
                        lambda game, S, actions, *a: expanded.append(actions) or
                        real(game, S, actions, *a))
    with g.symbolic.abstracted(abstractions.for_step(options)):
        step = induction.Step(g, invs, options, lambda *a, **k: None)
        built = [[x[0] for x in case[6]()] for case in step.cases]
        n = len(expanded)
        assert n > 0 and sum(map(len, built)) > 0
        p = Pass(g, trans, {i.name for i in invs}, options)
        again = [p.prepare(ci)[6] for ci in range(len(p.cases))]
    assert len(expanded) == n
    assert all(len(a) == len(b) and all(x is y for x, y in zip(a, b))
               for a, b in zip(built, again))
    # The exact reading keeps nothing: a second build expands every action again.
    S = step.cases[0][0]
    k0 = len(expanded)
    first = splits.paths(g, S, step.fields)
    k1 = len(expanded)
    second = splits.paths(g, S, step.fields)
    assert len(expanded) - k1 == k1 - k0 > 0 and len(first) == len(second) > 0
    assert not any(x is y for x, y in zip(first, second))
