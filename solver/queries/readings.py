"""Ambiguities: for a rule declared with several readings, a smallest state (fewest elements in
its seqs and bags) and a move on which two readings disagree — about legality, about the state
that results, or about the score.  Every witness is replayed under both readings in the
interpreter before it is shown."""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import z3

from ..engine import domains as dz
from ..lang import ir
from ..lang.errors import EvalError, RulebookError, TimeUp
from ..lang.progress import reporter
from ..engine.evaluate import Refused
from ..engine.game import Game, Move, load_game
from ..engine.symbolic import Unknown, check, leaves, make_solver, state_size
from ..lang.types import IntT


EXAMPLES_FIRST = 1000


@dataclass
class Ambiguity:
    reading: str
    question: str
    a: str
    b: str
    found: bool | None            # None: z3 gave up
    move: list | None = None
    what: str = ""                # legality | outcome | score
    under_a: str = ""
    under_b: str = ""
    size: int | None = None
    minimal: bool = False
    fields: list = field(default_factory=list)
    state_json: dict | None = None
    params: dict | None = None    # the parameters the witness holds under, when not the game's
    searched_on: dict | None = None   # where a presented witness was found (`embed.present`)
    tried: list = field(default_factory=list)   # parameters searched with no witness first
    note: str = ""                # a word on its scope (a witness that does not carry over)
    # The witness for the layers above to draw (`render.witness`): its state, in ``game`` (the
    # game under reading ``a``), and whether the drawing marks the move's squares (a solver's
    # or a presented witness; one met in an example is drawn unmarked).
    state: tuple | None = field(default=None, repr=False, compare=False)
    game: Game | None = field(default=None, repr=False, compare=False)
    marked: bool = False

    def as_json(self) -> dict:
        return {"reading": self.reading, "question": self.question, "a": self.a, "b": self.b,
                "found": self.found, "move": self.move, "disagree_on": self.what,
                "under_a": self.under_a, "under_b": self.under_b, "size": self.size,
                "minimal": self.minimal, "fields": self.fields, "state": self.state_json,
                **({"params": self.params} if self.params is not None else {}),
                **({"searched_on": self.searched_on} if self.searched_on is not None else {}),
                **({"tried": self.tried} if self.tried else {}),
                **({"note": self.note} if self.note else {})}


def find_ambiguities(game: Game, only: str | None = None, timeout_ms: int = 120_000,
                     progress=None, invariants: bool = False) -> list[Ambiguity]:
    """For each reading (or only ``only``) and each pair of its options, a smallest state and
    move where they disagree, under the game's own parameters.  With ``invariants``, only
    states where every invariant of the spec holds are searched (no piece missing from the
    box, none that the rules forbid): a witness the rules can reach, at the cost of the
    elements the conservation laws put back; without, a state may be one the rules never
    reach.  (`ascent.ambiguities` searches from the smallest sizes upward instead.)"""
    say = progress or (lambda m: None)
    first = examples_first(game)
    params = tuple(sorted(game.p.param_values.items()))
    out = []
    for r, a, b in reading_pairs(game, only):
        say(f"{r.name}: {a} vs {b}")
        out.append(pair_ambiguity(game, r, a, b, params, timeout_ms, invariants,
                                  examples=first))
    return out


def reading_pairs(game: Game, only: str | None = None) -> list[tuple]:
    """(reading, option a, option b) for each pair of options of each reading (or of
    ``only``), in the spec's order."""
    readings = [r for r in game.p.readings if only is None or r.name == only]
    if only is not None and not readings:
        raise RulebookError(f"{game.name} has no reading named {only!r} (readings: "
                            f"{', '.join(r.name for r in game.p.readings)})")
    return [(r, a, b) for r in readings
            for a, b in itertools.combinations([o for o, _ in r.options], 2)]


def examples_first(game: Game) -> bool:
    """Whether the states of the spec's examples are searched before any solving: the
    symbolic comparison builds every action instance over a symbolic state, and past a
    thousand instances (an action's orientations times the cells of a 3-D space) it is out of
    reach."""
    return sum(len(a.instances(game.initial())) for a in game.actions) > EXAMPLES_FIRST


def pair_ambiguity(game: Game, r, a: str, b: str, params: tuple, timeout_ms: int,
                   invariants: bool = False, say=None, deadline: float | None = None,
                   examples: bool = False) -> Ambiguity:
    """Where options ``a`` and ``b`` of reading ``r`` disagree, searched by z3 under
    ``params``; with ``examples``, the states of the spec's examples first (under the game's
    own parameters, for which they are written), and after z3 gives up, always."""
    variants = tuple(v for v in variants_of(game) if ":" not in v)
    amb = from_examples(game, variants, r.name, r.doc.text, a, b, invariants) \
        if examples else None
    if amb is None:
        ga = load_game(game.source, variants + (f"{r.name}:{a}",), params)
        gb = load_game(game.source, variants + (f"{r.name}:{b}",), params)
        amb = compare(ga, gb, r.name, r.doc.text, a, b, timeout_ms, invariants, say,
                      deadline)
        if amb.found is None:
            # z3 gave up: a witness among the examples' states is still a witness
            # (replayed under both readings), though not claimed smallest.
            amb = from_examples(game, variants, r.name, r.doc.text, a, b,
                                invariants) or amb
    return amb


def from_examples(game: Game, variants: tuple, reading: str, question: str, a: str, b: str,
                  invariants: bool = False) -> Ambiguity | None:
    """A witness among the states of the spec's own examples, before any solving: every state
    an example passes through (under reading ``a``), with every move the example plays or
    judges there, and the scores.  The rulebook's illustrated cases are where readings matter
    first, and for games whose states are too large for a symbolic search (a 3-D occupancy,
    statics) they are the only practical candidates.  Not claimed smallest.  With
    ``invariants``, a state where an invariant of the spec fails is passed over (an example's
    set-up may put pieces on the board without taking them from the box)."""
    for ex0 in game.p.examples:
        params = tuple(sorted({**game.p.param_values, **dict(ex0.params)}.items()))
        ga = load_game(game.source, variants + (f"{reading}:{a}",), params)
        gb = load_game(game.source, variants + (f"{reading}:{b}",), params)
        ex = next(e for e in ga.p.examples if e.name == ex0.name)
        try:
            amb = _example_witness(ga, gb, ex, reading, question, a, b, params, invariants)
        except (EvalError, KeyError, IndexError):
            # An example written for another board (the spec's own 8 x 8 where the search is
            # on 3 x 3) names squares this board lacks: not a state of this game.
            continue
        if amb is not None:
            return amb
    return None


def _example_witness(ga: Game, gb: Game, ex: ir.Example, reading: str, question: str,
                     a: str, b: str, params: tuple, invariants: bool = False
                     ) -> Ambiguity | None:
    """The first state of example ``ex`` (and move there) where the two readings disagree."""
    from .examples import example_move
    env = [None] * (ex.frame + 1)
    try:
        st = ga.run_stmts(ex.setup, ex.frame, ga.initial(), env)
    except Refused:
        return None
    for item in list(ex.script) + [None]:
        call = item if isinstance(item, ir.ActionCall) else \
            (item.call if isinstance(item, ir.Expect) and item.call is not None else None)
        # A state where an invariant fails is no witness (with ``invariants``): go on.
        here = not invariants or _within_invariants(ga, st)
        if here and call is not None:
            m = example_move(ga, call, st, env)
            ra, rb = outcome(ga, st, m), outcome(gb, st, m)
            if ra != rb:
                return explained(ga, gb, Ambiguity(reading, question, a, b, True), st,
                                  m, ra, rb, dict(params))
        if item is None or not here or not _score_differs(ga, gb, st):
            if isinstance(item, ir.ActionCall):
                try:
                    st, _ = ga.apply(st, example_move(ga, item, st, env))
                except Refused:
                    break
            continue
        return explained(ga, gb, Ambiguity(reading, question, a, b, True), st, None,
                          None, None, dict(params))
    return None


def _within_invariants(g: Game, st) -> bool:
    """Whether every state invariant of the spec holds in ``st`` (the interpreter's verdict)."""
    return all(g.holds(i, st) for i in g.p.invariants if not i.transition)


def _score_differs(ga: Game, gb: Game, st) -> bool:
    return _outcome_difference(ga, gb, st) is not None


def _outcome_difference(ga: Game, gb: Game, st):
    """The first of the game's end-of-game defs (`OUTCOME_DEFS`: the score, then who wins: a
    tie-break may be all that differs) on which the readings disagree in ``st``, as (the
    def, the player, the value under each reading); None when they agree on all."""
    from ..lang.types import finite
    for fn in OUTCOME_DEFS:
        if not ga.has_def(fn):
            continue
        pt = _player(ga)
        sa, sb = ga.expr(f"{fn}(p)", {"p": pt})[0], gb.expr(f"{fn}(p)", {"p": pt})[0]
        for p in finite(pt).values:
            if sa(st, p) != sb(st, p):
                return fn, p, sa(st, p), sb(st, p)
    return None


def explained(ga: Game, gb: Game, amb: Ambiguity, st, m, ra, rb, params: dict) -> Ambiguity:
    """Fill ``amb`` with the witness ``st`` under ``params``: move ``m`` with its outcomes
    ``ra``/``rb`` under the two readings (`outcome`), or, when ``m`` is None, the first player
    whose score, or else whose win, differs."""
    from ..lang.codec import to_json
    amb.size = _concrete_size(ga, st)
    amb.minimal = False
    amb.params = params
    if m is not None:
        amb.move = m.to_json(ga)
        amb.what = "legality" if (ra[0] == "illegal") != (rb[0] == "illegal") else "outcome"
        amb.under_a, amb.under_b = _say(ga, st, ra), _say(gb, st, rb)
        if ra[0] == "legal" and rb[0] == "legal":
            amb.fields = [f.name for f, x, y in zip(ga.p.state, ra[1], rb[1]) if x != y]
    else:
        fn, p, va, vb = _outcome_difference(ga, gb, st)
        verb = "scores" if fn == "score" else "wins:"
        amb.what = fn
        amb.under_a = f"player {p} {verb} {_fmt(va)}"
        amb.under_b = f"player {p} {verb} {_fmt(vb)}"
    amb.state, amb.game = st, ga
    amb.state_json = {f.name: to_json(f.type, v) for f, v in zip(ga.p.state, st)}
    return amb


def variants_of(game: Game) -> tuple[str, ...]:
    """The variant files ``game`` was loaded with (its expansions, by path)."""
    return game.extensions


def compare(ga: Game, gb: Game, reading: str, question: str, a: str, b: str,
            timeout_ms: int, invariants: bool = False, say=None,
            deadline: float | None = None) -> Ambiguity:
    """A smallest state (and move) where readings ``a`` (game ``ga``) and ``b`` (``gb``)
    disagree, by z3: found False when there is none, None when z3 gave up.  Each z3 query
    gets ``timeout_ms``, and none runs past ``deadline`` (a `time.monotonic()` instant, where
    `TimeUp` is raised); ``say`` hears what it is doing."""
    say = reporter(say)
    say(f"{reading}: {a} vs {b}: building the symbolic moves")
    t = ga.state_type
    fresh = dz.Fresh("w_")
    S = fresh.value(t, "s")
    unknowns = ga.symbolic.searches.unknowns + gb.symbolic.searches.unknowns
    cases = []  # (what, move builder, disagreement term)
    for acta, actb in zip(ga.actions, gb.actions):
        # Readings are folded to constants by the checker: an action compiled to the same IR
        # under both readings cannot disagree, and needs no solving.
        if _same_ir(acta.ir, actb.ir):
            continue
        ia, ib = acta.sym_instances(S), actb.sym_instances(S)
        for (gia, pa), (gib, pb) in zip(ia, ib):
            paths_a = [(dz.and_(gia, g), st) for g, st, _ in acta.sym_apply(S, pa)]
            paths_b = [(dz.and_(gib, g), st) for g, st, _ in actb.sym_apply(S, pb)]
            legal_a = dz.any_(g for g, _ in paths_a)
            legal_b = dz.any_(g for g, _ in paths_b)
            parts = [dz.not_(dz.leaf_eq(dz.lift(legal_a), dz.lift(legal_b)))
                     if not (legal_a is legal_b) else False]
            for (g1, s1), (g2, s2) in itertools.product(paths_a, paths_b):
                diff = _differs(t, s1, s2)
                if diff is not False:
                    parts.append(dz.and_(dz.and_(g1, g2), diff))
            d = dz.any_(p for p in parts if p is not False)
            if d is not False:
                cases.append((acta.name, pa, d))
    score_terms = []
    # The end of the game: who scores what, and who wins (a tie-break may be all that differs).
    for fn in OUTCOME_DEFS:
        if not ga.has_def(fn) or _same_ir(_score_ir(ga, fn), _score_ir(gb, fn)):
            continue
        pt = ga.p.types.get("Player", IntT(0, 0))
        fa = ga.expr(f"{fn}(p)", {"p": pt}, symbolic=True)[0]
        fb = gb.expr(f"{fn}(p)", {"p": pt}, symbolic=True)[0]
        from ..lang.types import finite
        for p in finite(pt).values:
            va, vb = fa(S, p), fb(S, p)
            if va is not vb:
                score_terms.append(dz.not_(dz.leaf_eq(va, vb)))
    any_case = dz.any_([d for _, _, d in cases] + score_terms)
    amb = Ambiguity(reading, question, a, b, False)
    if any_case is False:
        return amb
    solver = make_solver(timeout_ms, sides=(ga.symbolic.sides, gb.symbolic.sides))
    solver.add(*fresh.constraints)
    # ``invariants``: only states where the spec's invariants hold (a witness in a state the
    # rules never reach, one that breaks a rule or has pieces missing from the box,
    # shows no reading at work).
    if invariants:
        solver.add(*[ga.holds_symbolic(i, S) for i in ga.p.invariants if not i.transition])
    solver.add(dz.lift(any_case))
    # Smallest: fewest elements first, then fewest scalars away from their defaults.
    size = dz.lift(state_size(t, S)) * 1000 + _noise(t, S)
    say(f"{reading}: {a} vs {b}: solving ({len(cases)} action instances disagree)")
    try:
        if not _check(solver, timeout_ms, deadline):
            return amb
        model = solver.model()
        probes = iter(range(1, 10**9))
        model, minimal = _smallest(solver, size, model, timeout_ms, deadline,
                                   lambda lo, hi: say(f"{reading}: {a} vs {b}: shrinking the "
                                                      f"witness, checks", done=next(probes)))
    except Unknown:
        amb.found = None
        return amb
    st = dz.concretize(t, S, model)
    # A bounded search (`reachable`) over the symbolic state is an unknown boolean to z3: its
    # witness is a candidate, and one that does not replay is no witness (the examples' states
    # are tried, as when z3 gives up).
    searched = ga.symbolic.searches.unknowns + gb.symbolic.searches.unknowns > unknowns
    try:
        return _explain(ga, gb, amb, st, model, cases, minimal)
    except EvalError:
        # The disagreement z3 found lies in a state the interpreter cannot evaluate (an
        # undo with no bid to pop, say: the symbolic domain does not constrain a pop of an
        # empty seq).  No witness, as if z3 had given up: the examples' states are tried.
        return Ambiguity(reading, question, a, b, None)
    except RulebookError:
        if not searched:
            raise
        return Ambiguity(reading, question, a, b, None,
                         note="z3 reads a bounded search (`reachable`) over an unknown state "
                              "as an unknown: its candidate did not replay")


def _check(solver, timeout_ms: int, deadline: float | None) -> bool:
    """`check` within ``timeout_ms``, and within ``deadline``: past it, `TimeUp` (the time
    limit of the whole search), not "z3 gave up"."""
    if deadline is None:
        return check(solver)
    if time.monotonic() >= deadline:
        raise TimeUp()
    try:
        return check(solver, deadline=min(deadline, time.monotonic() + timeout_ms / 1000))
    except Unknown:
        if time.monotonic() >= deadline - 0.05:
            raise TimeUp() from None
        raise


def _smallest(solver, size, model, timeout_ms: int, deadline: float | None, say):
    """The model of least ``size`` (and whether it is proved least): bisection between what
    the last model weighs and what no model can weigh less than, each probe one check.  When
    z3 gives up on a probe, the best model so far, not claimed least."""
    hi = model.eval(size, model_completion=True).as_long()
    lo = 0                                    # no model weighs less than ``lo``
    while lo < hi:
        mid = (lo + hi) // 2 if hi - lo > 1 else lo
        say(lo, hi)
        solver.push()
        solver.add(size <= mid)
        try:
            found = _check(solver, timeout_ms, deadline)
        except Unknown:
            solver.pop()
            return model, False
        if found:
            model = solver.model()
            hi = model.eval(size, model_completion=True).as_long()
        else:
            lo = mid + 1
        solver.pop()
    return model, True


def _same_ir(x, y) -> bool:
    try:
        return x == y
    except RecursionError:
        return False


def _player(g: Game):
    return g.p.types.get("Player", IntT(0, 0))


OUTCOME_DEFS = ("score", "winner")


def _score_ir(g: Game, fn: str = "score"):
    """The checked IR of `score(p)` or `winner(p)` (for comparing two readings' outcomes)."""
    return g.symbols.call(fn, [ir.Local(_player(g), None, "p", 0)])


def _noise(t, S):
    """How many top-level scalar fields (and map-of-scalar entries) are off their default."""
    from ..lang.types import BoolT, EnumT, MapT, default
    terms = []
    for (_, ft), v in zip(t.fields, S):
        if isinstance(ft, (BoolT, IntT, EnumT)):
            vals, dflts = [v], [default(ft)]
        elif isinstance(ft, MapT) and isinstance(ft.val, (BoolT, IntT, EnumT)):
            vals, dflts = list(v), [default(ft.val)] * len(v)
        else:
            continue
        for x, d in zip(vals, dflts):
            if dz.is_sym(x):
                terms.append(z3.If(x == dz.lift(d), 0, 1))
    return z3.Sum(terms) if terms else 0


def _differs(t, s1, s2):
    """A term: the two states differ (comparing only leaves that are not the same object)."""
    parts = []
    for x, y in zip(leaves(t, s1), leaves(t, s2)):
        if x is y:
            continue
        e = dz.leaf_eq(x, y)
        if e is True:
            continue
        parts.append(dz.not_(e))
    return dz.any_(parts)


def _explain(ga: Game, gb: Game, amb: Ambiguity, st, model, cases, minimal: bool) -> Ambiguity:
    """Find the move that disagrees on the concrete witness, by replay in the interpreter."""
    from ..lang.codec import to_json
    amb.found = True
    amb.minimal = minimal
    amb.size = _concrete_size(ga, st)
    for name, params, d in cases:
        if not z3.is_true(model.eval(dz.lift(d), model_completion=True)):
            continue
        act = ga.action(name)
        ps = tuple(dz.concretize(p.domain.elem, v, model) for p, v in zip(act.ir.params, params))
        m = Move(name, ps)
        ra, rb = outcome(ga, st, m), outcome(gb, st, m)
        if ra == rb:
            continue
        amb.move = m.to_json(ga)
        amb.what = "legality" if (ra[0] == "illegal") != (rb[0] == "illegal") else "outcome"
        amb.under_a, amb.under_b = _say(ga, st, ra), _say(gb, st, rb)
        changed = []
        if ra[0] == "legal" and rb[0] == "legal":
            changed = [f.name for f, x, y in zip(ga.p.state, ra[1], rb[1]) if x != y]
        amb.fields = changed
        break
    else:
        from ..lang.types import finite
        said = False
        for fn in OUTCOME_DEFS:
            if not ga.has_def(fn):
                continue
            sa = ga.expr(f"{fn}(p)", {"p": ga.p.types.get("Player")})[0]
            sb = gb.expr(f"{fn}(p)", {"p": gb.p.types.get("Player")})[0]
            for p in finite(ga.p.types.get("Player")).values:
                if sa(st, p) != sb(st, p):
                    amb.what = fn
                    amb.move = None
                    verb = "scores" if fn == "score" else "wins:"
                    amb.under_a = f"player {p} {verb} {_fmt(sa(st, p))}"
                    amb.under_b = f"player {p} {verb} {_fmt(sb(st, p))}"
                    said = True
                    break
            if said:
                break
        if not said:
            raise RulebookError(f"{amb.reading}: the solver's witness does not replay as a "
                                f"disagreement in the interpreter")
    amb.state, amb.game, amb.marked = st, ga, True
    amb.state_json = {f.name: to_json(f.type, v) for f, v in zip(ga.p.state, st)}
    return amb


def _fmt(v) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def outcome(g: Game, st, m: Move):
    """Move ``m`` in ``st``: ("legal", the next state) or ("illegal", the refusing rule)."""
    try:
        st2, _ = g.apply(st, m, check_domain=False)
        return ("legal", st2)
    except Refused as r:
        return ("illegal", r.rule)


def _say(g: Game, st, res) -> str:
    if res[0] == "illegal":
        return f"illegal (rule {res[1]})"
    return "legal"


def _concrete_size(g: Game, st) -> int:
    return int(state_size(g.state_type, st))
