"""The Z3 backend's machinery: solvers with fixed seeds and limits, bounded unrolling of the
game's actions over symbolic states, and reading models back as concrete moves."""
from __future__ import annotations

import time

from dataclasses import dataclass, field

import z3

from . import domains as dz
from . import linear
from .abstraction import Abstraction
from .values import seq_len, sum_terms
from .game import Game, Move
from .pins import pin_guard
from ..lang.types import BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, TextT, Type

DEFAULT_TIMEOUT_MS = 60_000


class Unknown(Exception):
    """Z3 gave up (time-out or resource limit), or the time ran out before it was asked: the
    answer is "unknown", never "impossible"."""


def make_solver(timeout_ms: int = DEFAULT_TIMEOUT_MS, optimize: bool = False,
                finite: bool = False, general: bool = False,
                abstraction: Abstraction | None = None, sides=None):
    """A solver with fixed seeds and a time-out (wall-clock, only softly enforced by z3).
    ``finite``: z3's incremental SAT solver (QF_FD), for Boolean formulas checked under
    assumptions.  ``general``: z3's default solver, configured by what each query holds,
    instead of the one for linear integer arithmetic (the symmetry checks use it; the
    inductive step does not, whose queries it took up to twenty-four times as long on).
    ``abstraction``: what the queries' terms were abstracted by, whose side conditions
    `check` adds (`abstraction_of`).  ``sides``: the `linear.Sides` of the evaluator whose
    terms the queries hold (``game.symbolic.sides``; a tuple of them for terms of several
    games), whose side conditions `check` adds for the terms a formula mentions: a solver
    without them, or with empty ones, gets none and `check` walks nothing."""
    s = z3.Optimize() if optimize else z3.Solver() if general else \
        z3.SolverFor("QF_FD" if finite else "QF_LIA")
    s.set("timeout", int(timeout_ms))
    if not optimize:
        s.set("random_seed", 0)
    z3.set_param("smt.random_seed", 0)
    z3.set_param("sat.random_seed", 0)
    if abstraction is not None:
        s.rulebook_abstraction = abstraction
    if sides is not None:
        s.rulebook_sides = (sides,) if isinstance(sides, linear.Sides) else tuple(sides)
    return s


def sides_of(solver) -> tuple:
    """The `linear.Sides` a solver was made with (`make_solver`), if any."""
    return getattr(solver, "rulebook_sides", ())


def abstraction_of(solver) -> Abstraction | None:
    """The abstraction a solver was made with (`make_solver`), if any."""
    return getattr(solver, "rulebook_abstraction", None)


def check(solver, *assumptions, deadline: float | None = None) -> bool:
    """sat (True) or unsat (False); Unknown when z3 gives up.  With ``deadline`` (a
    `time.monotonic()` instant) the check gets only the time left before it, so that a query
    of several checks keeps to one time limit."""
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Unknown("the time limit was reached")
        solver.set("timeout", max(1, int(left * 1000)))
    # `exists real` literals are defined by side conditions, added for those the query uses
    # (and an abstraction's unknowns by what it knows of them).
    side = linear.side_conditions(solver, assumptions, abstraction_of(solver), sides_of(solver))
    if side:
        solver.add(*side)
    r = run_check(solver, *assumptions)
    if r == z3.sat:
        return True
    if r == z3.unsat:
        return False
    raise Unknown(solver.reason_unknown())


# What z3 says when a Ctrl-C stopped a check: z3 catches the signal itself and answers
# "unknown", so Python never sees it.
INTERRUPTED = ("interrupted from keyboard",)


def run_check(solver, *assumptions):
    """``solver.check(*assumptions)``, but a Ctrl-C that z3 caught during the check is raised
    again as KeyboardInterrupt (z3 would answer "unknown" and the work would go on)."""
    r = solver.check(*assumptions)
    if r == z3.unknown and solver.reason_unknown() in INTERRUPTED:
        raise KeyboardInterrupt
    return r


# ---- fast term builders for the unrolling's control literals ---------------------------------
# z3's Python wrappers coerce and sort-check every argument; the unrolling builds thousands of
# `choice == i` and disjunctions of literals whose sorts are known, so it calls the C API.

_INTS: dict = {}


def _int_val(i: int):
    v = _INTS.get(i)
    if v is None:
        v = _INTS[i] = z3.IntVal(i)
    return v


def _eq_int(x, i: int):
    ctx = x.ctx
    return z3.BoolRef(z3.z3core.Z3_mk_eq(ctx.ref(), x.as_ast(), _int_val(i).as_ast()), ctx)


def _range(x, lo: int, hi: int):
    ctx = x.ctx
    # Each new term is wrapped at once: the wrapper holds the reference that keeps z3 from
    # collecting it before it is used.
    a = z3.BoolRef(z3.z3core.Z3_mk_ge(ctx.ref(), x.as_ast(), _int_val(lo).as_ast()), ctx)
    b = z3.BoolRef(z3.z3core.Z3_mk_le(ctx.ref(), x.as_ast(), _int_val(hi).as_ast()), ctx)
    return _and_lits([a, b])


def _and_lits(lits: list):
    ctx = lits[0].ctx
    arr, n = z3.z3._to_ast_array(lits)
    return z3.BoolRef(z3.z3core.Z3_mk_and(ctx.ref(), n, arr), ctx)


def _not_lit(x):
    return z3.BoolRef(z3.z3core.Z3_mk_not(x.ctx.ref(), x.as_ast()), x.ctx)


def _or_lits(lits: list):
    if len(lits) == 1:
        return lits[0]
    ctx = lits[0].ctx
    arr, n = z3.z3._to_ast_array(lits)
    return z3.BoolRef(z3.z3core.Z3_mk_or(ctx.ref(), n, arr), ctx)


@dataclass
class Branch:
    action: str
    params: tuple
    guard: object
    state: object
    shows: list
    concrete: bool = False      # the successor has no symbolic leaf
    # Its terms read some value more coarsely than the abstraction was asked to (one of the
    # action's instances did: `Abstraction.approximations`): a counterexample on it may not
    # be one.
    approx: bool = False


def branches(game: Game, st, actions=None,
             concrete: bool | None = None, part: tuple | None = None) -> list[Branch]:
    """Every action instance from a (possibly symbolic) state, with its guard and successor;
    with ``part`` (lo, hi), over a symbolic state, only those of the instances numbered lo
    to hi - 1 in each action's `sym_instances` (a share of an action's paths, in order).

    A fully concrete state is expanded by the interpreter: both are compiled from the same IR
    and agree on concrete values (tests/engine/test_differential.py checks it), and the interpreter
    is many times faster there."""
    out = []
    if (concrete if concrete is not None else dz.is_concrete(st)) and \
            (not isinstance(actions, dict) or dz.is_concrete(tuple(actions.values()))):
        for m, st2, shows in game.legal(st, actions):
            out.append(Branch(m.action, m.params, True, st2, shows, True))
        return out
    coarse = game.symbolic.abstraction.approximations
    for a in game.actions:
        if actions and a.name not in actions:
            continue
        instances = a.sym_instances(st)
        if part is not None:
            instances = instances[part[0]:part[1]]
        # Once an instance read a value coarsely, the later ones may have too (through
        # what the evaluator remembers): all are marked.
        before = coarse()
        for g, params in instances:
            g = dz.and_(g, pin_guard(actions, a, params))
            if g is False:
                continue
            for guard, st2, ctx in a.sym_apply(st, params):
                full = dz.and_(g, guard)
                if full is False:
                    continue
                out.append(Branch(a.name, params, full, st2, ctx.shows,
                                  approx=coarse() != before))
    return out


@dataclass
class Node:
    """One symbolic state of the unrolling, active when its literal holds."""

    state: object
    active: object                      # z3 Bool or True
    concrete: bool | None = None        # whether the state has no symbolic leaf (None: unknown)
    choice: object = None               # z3 Int: which branch (len(branches) = stop)
    branches: list = None
    succ: list = None                   # index in the next layer, per branch then stop


@dataclass
class Unrolled:
    layers: list            # layers[k]: the nodes after k steps (exactly one is active)
    constraints: list
    stopped: list = field(default_factory=list)     # [k]: the run made at most k moves

    def at_most(self, moves: int):
        """The literal that the run makes at most ``moves`` moves (None: every run does)."""
        return self.stopped[moves] if moves < len(self.stopped) else None

    def final(self, fn, concrete_fn=None):
        """Combine ``fn(state)`` over the last layer's nodes (the active one decides);
        ``concrete_fn``, the interpreter's version of ``fn``, serves wholly concrete states."""
        nodes = self.layers[-1]
        vals = [concrete_fn(n.state) if concrete_fn and n.concrete else fn(n.state)
                for n in nodes]
        if len(nodes) > 1 and not any(dz.is_sym(v) for v in vals):
            # Concrete values: one disjunction of the active literals per distinct value.
            if all(isinstance(v, bool) for v in vals):
                acts = [n.active for n, v in zip(nodes, vals) if v]
                return any(a is True for a in acts) or (_or_lits(acts) if acts else False)
            by: dict = {}
            for n, v in zip(nodes, vals):
                by.setdefault(v, []).append(n.active)
            items = sorted(by.items())
            out = items[-1][0]
            for v, acts in reversed(items[:-1]):
                out = z3.If(_or_lits(acts), v, out)
            return out
        out = vals[-1]
        for n, v in zip(reversed(nodes[:-1]), reversed(vals[:-1])):
            out = _ite_value(n.active, v, out)
        return out


def _ite_value(c, a, b):
    if c is True:
        return a
    if isinstance(a, bool) or isinstance(b, bool) or (dz.is_sym(a) and z3.is_bool(a)):
        return dz.or_(dz.and_(c, a), dz.and_(dz.not_(c), b))
    return dz.leaf_ite(c, a, b)


def unroll(game: Game, st0, depth: int, actions, prefix: str = "ch",
           exact_budget: int = 0, deadline: float | None = None) -> Unrolled:
    """Unroll ``depth`` steps; at each step the active node picks a branch or "stop" (which
    keeps its state), so the last layer covers every run of at most ``depth`` moves.

    Successors are merged only when they agree on the concrete top-level scalar fields (the
    phase, whose turn...): a path that left the building phase is not mixed with one still in
    it, so control stays concrete and guards fold away.  Merged leaves that differ get fresh
    variables constrained per choice (a transition relation, not a nested term), so terms
    never grow with the depth.

    With ``exact_budget`` > 0, a layer whose successors have at most that many distinct
    concrete skeletons (every concrete leaf, symbolic leaves as "*") merges only successors with
    the same skeleton: their concrete parts stay concrete, so guards on them fold away and the
    formula only carries what is really symbolic.  Past the budget the layer falls back to the
    coarse key above (state merging traded against path explosion, as in dynamic state merging
    for symbolic execution)."""
    t = game.state_type
    cons: list = []
    layers = [[Node(st0, True)]]
    stopped = False  # whether the run stopped at an earlier step: then it stays stopped
    stops: list = []  # stops[k]: whether it stopped by step k (made at most k moves)
    memo: dict = {}  # skeletons of the values seen so far (successors share most subtrees)
    for k in range(depth):
        groups: dict = {}
        pending: list = []
        stops_now = []
        for ni, node in enumerate(layers[-1]):
            _in_time(deadline, depth)
            bs = branches(game, node.state, actions, node.concrete)
            ch = z3.Int(f"{prefix}{k}_{ni}")
            node.choice, node.branches, node.succ = ch, bs, []
            n = len(bs)
            cons.append(_range(ch, 0, n))
            # An inactive node "stops", so taking a branch implies being active: the branch
            # conditions need no conjunction with the node's literal.
            is_stop = _eq_int(ch, n)
            if node.active is not True:
                cons.append(_or_lits([node.active, is_stop]))
            if stopped is not False:
                cons.append(_or_lits([_not_lit(stopped), is_stop]))
            stop = is_stop if node.active is True else _and_lits([node.active, is_stop])
            stops_now.append(stop)
            for i, b in enumerate(bs):
                lit = _eq_int(ch, i)
                if b.guard is not True:
                    cons.append(z3.Implies(lit, dz.lift(b.guard)))
                pending.append((node, lit, b.state, b.concrete))
            pending.append((node, stop, node.state, bool(node.concrete)))
        keys = None
        if exact_budget:
            keys = [st if conc else skeleton(st, memo) for _, _, st, conc in pending]
            if len(set(keys)) > exact_budget:
                keys = None
        exact = keys is not None
        if not exact:
            keys = [merge_key(t, st) for _, _, st, _ in pending]
        for (node, cond, st, _), key in zip(pending, keys):
            groups.setdefault(key, []).append((cond, st))
            node.succ.append(key)
        layer = []
        index = {}
        for key, members in groups.items():
            _in_time(deadline, depth)
            index[key] = len(layer)
            # An exact key is the state itself when that state is wholly concrete.
            concrete = (key is members[0][1]) if exact else None
            if len(members) == 1:
                active = members[0][0]
                state = members[0][1]
            elif concrete:
                active = z3.Bool(f"{prefix}{k + 1}_a{len(layer)}")
                cons.append(active == _or_lits([dz.lift(c) for c, _ in members]))
                state = members[0][1]      # equal concrete states: nothing to merge
            else:
                active = z3.Bool(f"{prefix}{k + 1}_a{len(layer)}")
                cons.append(active == z3.Or([dz.lift(c) for c, _ in members]))
                tag = f"{prefix}{k + 1}_{len(layer)}"
                if exact:
                    state = _merge_alike([st for _, st in members], [c for c, _ in members],
                                         tag, cons, [0])
                else:
                    state = _merge_states(t, members, tag, cons, deadline, depth)
            layer.append(Node(state, active, concrete))
        for node in layers[-1]:
            node.succ = [index[key] for key in node.succ]
        layers.append(layer)
        nxt = z3.Bool(f"{prefix}{k + 1}_stopped")
        cons.append(nxt == _or_lits(([] if stopped is False else [stopped]) + stops_now))
        stopped = nxt
        stops.append(nxt)
    return Unrolled(layers, cons, stops)


def _in_time(deadline: float | None, depth: int) -> None:
    """Building the formula is itself past the query's time-out: `Unknown`."""
    if deadline is not None and time.monotonic() > deadline:
        raise Unknown(f"the unrolling of {depth} steps did not finish in time")


def merge_key(t: RecordT, st) -> tuple:
    """The concrete values of the state's top-level scalar fields ("*" where symbolic)."""
    out = []
    for (_, ft), v in zip(t.fields, st):
        if isinstance(ft, (BoolT, IntT, EnumT)):
            out.append("*" if dz.is_sym(v) else v)
    return tuple(out)


def skeleton(v, memo: dict):
    """The value with "*" for its symbolic leaves: equal skeletons have the same shape and the
    same concrete leaves.  Subtrees shared between states are walked once (``memo`` by id)."""
    hit = memo.get(id(v))
    if hit is not None:
        return hit[1]
    if isinstance(v, tuple):
        parts = tuple(skeleton(x, memo) for x in v)
        key = v if all(a is b for a, b in zip(parts, v)) else parts
    elif isinstance(v, dz.SymSeq):
        key = ("<seq>", skeleton(v.length, memo), skeleton(v.slots, memo))
    elif dz.is_sym(v):
        key = "*"
    else:
        key = v
    memo[id(v)] = (v, key)   # keeps v alive, so its id is not reused
    return key


def _merge_alike(vals: list, conds: list, tag: str, cons: list, counter: list):
    """Merge values of equal skeletons: shared and equal parts are kept, and every leaf on which
    they differ becomes a fresh variable equal to each member's leaf under its condition."""
    first = vals[0]
    if all(v is first for v in vals):
        return first
    if isinstance(first, tuple):
        return tuple(_merge_alike([v[i] for v in vals], conds, tag, cons, counter)
                     for i in range(len(first)))
    if isinstance(first, dz.SymSeq):
        return dz.SymSeq(_merge_alike([v.length for v in vals], conds, tag, cons, counter),
                         _merge_alike([v.slots for v in vals], conds, tag, cons, counter))
    if not dz.is_sym(first) and all(not dz.is_sym(v) and v == first for v in vals):
        return first
    is_bool = isinstance(first, bool) or (dz.is_sym(first) and z3.is_bool(first))
    name = f"{tag}_{counter[0]}"
    counter[0] += 1
    var = z3.Bool(name) if is_bool else z3.Int(name)
    for c, v in zip(conds, vals):
        cons.append(z3.Implies(dz.lift(c), var == dz.lift(v)))
    return var


def _merge_states(t: Type, members: list, tag: str, cons: list,
                  deadline: float | None = None, depth: int = 0):
    """One state for several (condition, state) members: a fresh variable for every leaf on
    which they differ, equal to the member's leaf under the member's condition.  A merge of
    many large states takes seconds, so the deadline is looked at on every leaf."""
    per = [leaves(t, st) for _, st in members]
    base = per[0]
    out = []
    for j, cur in enumerate(base):
        _in_time(deadline, depth)
        vals = [lv[j] for lv in per]
        if all(v is cur for v in vals):
            out.append(cur)
            continue
        if not dz.is_sym(cur) and all(not dz.is_sym(v) and v == cur and type(v) is type(cur)
                                      for v in vals):
            out.append(cur)
            continue
        is_bool = isinstance(cur, bool) or (dz.is_sym(cur) and z3.is_bool(cur))
        var = z3.Bool(f"{tag}_{j}") if is_bool else z3.Int(f"{tag}_{j}")
        for (c, _), v in zip(members, vals):
            cons.append(z3.Implies(dz.lift(c), var == dz.lift(v)))
        out.append(var)
    return rebuild(t, members[0][1], iter(out))


def rebuild(t: Type, template, it):
    """The value shaped like ``template`` whose leaves (in `leaves` order) come from ``it``;
    parts whose leaves did not change are returned as they were."""
    match t:
        case BoolT() | IntT() | EnumT() | TextT():
            return next(it)
        case RecordT(fields=fields):
            parts = tuple(rebuild(ft, x, it) for (_, ft), x in zip(fields, template))
            return template if all(a is b for a, b in zip(parts, template)) else parts
        case MapT(val=vt):
            parts = tuple(rebuild(vt, x, it) for x in template)
            return template if all(a is b for a, b in zip(parts, template)) else parts
        case BagT() | SetT():
            parts = tuple(next(it) for _ in template)
            return template if all(a is b for a, b in zip(parts, template)) else parts
        case SeqT(elem=et, cap=cap):
            s = dz.to_symseq(t, template)
            n = next(it)
            slots = tuple(rebuild(et, x, it) for x in s.slots[:cap])
            if n is s.length and all(a is b for a, b in zip(slots, s.slots)):
                return template
            return dz.SymSeq(n, slots)
    raise TypeError(t)


def read_moves(game: Game, u: Unrolled, model: z3.ModelRef) -> list[Move]:
    """The moves a model chose along the active path, parameters read back from the model."""
    moves = []
    ni = 0
    for layer in u.layers[:-1]:
        node = layer[ni]
        i = model.eval(node.choice, model_completion=True).as_long()
        if i < len(node.branches):
            b = node.branches[i]
            a = game.action(b.action)
            params = tuple(dz.concretize(p.domain.elem, v, model)
                           for p, v in zip(a.ir.params, b.params))
            moves.append(Move(b.action, params))
        ni = node.succ[i]
    return moves


def state_size(t: Type, v):
    """A measure of a state's size: elements in its seqs and bags (for "smallest" witnesses)."""
    match t:
        case BoolT() | IntT() | EnumT() | TextT():
            return 0
        case RecordT(fields=fields):
            return sum_terms(state_size(ft, x) for (_, ft), x in zip(fields, v))
        case MapT(val=vt):
            return sum_terms(state_size(vt, x) for x in v)
        case SeqT():
            return seq_len(v)
        case BagT():
            return sum_terms(v)
        case SetT():
            return sum_terms(z3.If(x, 1, 0) if dz.is_sym(x) else int(x) for x in v)
    raise TypeError(t)


def leaves(t: Type, v) -> list:
    """The scalar leaves of a value in a fixed order (seqs as length then every slot)."""
    out: list = []

    def walk(t, v):
        match t:
            case BoolT() | IntT() | EnumT() | TextT():
                out.append(v)
            case RecordT(fields=fields):
                for (_, ft), x in zip(fields, v):
                    walk(ft, x)
            case MapT(val=vt):
                for x in v:
                    walk(vt, x)
            case BagT() | SetT():
                out.extend(v)
            case SeqT(elem=et, cap=cap):
                s = dz.to_symseq(t, v)
                out.append(s.length)
                for x in s.slots[:cap]:
                    walk(et, x)
    walk(t, v)
    return out


def substitution(t: Type, fresh, other) -> list[tuple]:
    """Pairs (leaf variable of ``fresh``, leaf of ``other``) where the two differ."""
    pairs = []
    for a, b in zip(leaves(t, fresh), leaves(t, other)):
        if a is b:
            continue
        pairs.append((a, dz.lift(b)))
    return pairs


# ---- explicit-state runs: the unrolling from a wholly concrete state ---------------------------

@dataclass
class Explicit:
    """Every state reachable from a concrete start in at most ``depth`` moves, each once, at the
    fewest moves that reach it (its level), with the moves from each state to states of the
    next level.  Every state within the bound is the end of such a run (a shortest one), and
    every such run is within the bound: the runs a bounded unrolling covers, without the copies
    of a state that a layered unrolling makes for each step count."""

    states: list
    level: list             # level[n]: the fewest moves that reach states[n]
    into: list              # into[n]: [(predecessor node, Move), ...], all of level[n] - 1


def explore(game: Game, st0, depth: int, actions,
            budget: int, deadline: float | None = None) -> Explicit | None:
    """Breadth-first search by the interpreter; None past ``budget`` states.  Past
    ``deadline`` (a `time.monotonic` value) it raises `Unknown`."""
    index = {st0: 0}
    states, level, into = [st0], [0], [[]]
    frontier = [0]
    for k in range(1, depth + 1):
        nxt = []
        for n in frontier:
            if deadline is not None and time.monotonic() > deadline:
                raise Unknown(f"the states within {depth} moves were still being listed "
                              f"({len(states)} so far) when the time ran out")
            for m, st2, _ in game.legal(states[n], actions):
                j = index.get(st2)
                if j is None:
                    j = index[st2] = len(states)
                    states.append(st2)
                    level.append(k)
                    into.append([])
                    nxt.append(j)
                    if len(states) > budget:
                        return None
                elif level[j] != k:
                    continue        # a shorter run reaches it
                into[j].append((n, m))
        frontier = nxt
        if not frontier:
            break
    return Explicit(states, level, into)


def encode_runs(ex: Explicit, prefix: str) -> list[str]:
    """SMT-LIB text for "which states a run from node 0 can reach": a Boolean ``{prefix}{n}``
    per state, the start true, and every other state reached only if one of its predecessors
    is (each state's level is one more than its predecessors', so the justification ends at the
    start: a true state is the end of a run, read back by `read_run`).  Written as text and
    parsed at once, it is a few hundred clauses for z3's SAT solver, and far cheaper to build
    than through the Python API."""
    p = prefix
    lines = [f"(declare-const {p}0 Bool)", f"(assert {p}0)"]
    for n in range(1, len(ex.states)):
        ps = list(dict.fromkeys(i for i, _ in ex.into[n]))
        lines.append(f"(declare-const {p}{n} Bool)")
        body = f"{p}{ps[0]}" if len(ps) == 1 else "(or " + " ".join(f"{p}{i}" for i in ps) + ")"
        lines.append(f"(assert (=> {p}{n} {body}))")
    return lines


def read_run(ex: Explicit, model: z3.ModelRef, prefix: str, end: int) -> list[Move]:
    """The moves of a run from node 0 to ``end`` (true in the model), walking back through
    predecessors the model makes true."""
    true: dict = {}

    def holds(n):
        v = true.get(n)
        if v is None:
            v = true[n] = z3.is_true(model.eval(z3.Bool(f"{prefix}{n}"), model_completion=True))
        return v

    moves = []
    n = end
    while n:
        step = next(((i, m) for i, m in ex.into[n] if holds(i)), None)
        if step is None:
            raise ValueError(f"state {n} is true in the model but no predecessor is")
        n = step[0]
        moves.append(step[1])
    moves.reverse()
    return moves

