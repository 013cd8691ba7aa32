"""A compiled game: the checked program with both domains of the one evaluator, and the
reference interpreter's operations (initial state, legal moves with reasons, apply, playouts)."""
from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import repeat

import z3

from . import domains as dz
from . import draws, programcache
from ..lang import ir
from ..lang.check import Symbols, check_expression, check_program, state_type
from ..lang.codec import from_json, to_json
from ..lang.errors import EvalError, InputError
from .checks import bool_check, conjunct_gates, gate, passes, split_gates
from .evaluate import Compiler, Refused, ShowLog, SymCtx, const_value
from .instances import fixed_instances, instances_fn, weights_fn
from .instances import locals_used as _locals_used
from .pins import matches, pins_of
from .reach import Searches, searches_in
from ..lang.irwalk import nodes
from ..lang.sources import gc_paused, is_path, load_files, spec_texts, texts_digest
from ..lang.types import SeqT, Type, default


@dataclass(frozen=True)
class Move:
    action: str
    params: tuple

    def label(self, game: "Game") -> str:
        a = game.action(self.action)
        args = ", ".join(_fmt(b.domain.elem, v) for b, v in zip(a.ir.params, self.params))
        return f"{self.action}({args})"

    def to_json(self, game: "Game") -> list:
        a = game.action(self.action)
        return [self.action, *[to_json(b.domain.elem, v) for b, v in zip(a.ir.params, self.params)]]


def _locate(e: EvalError, span) -> None:
    """An evaluation error that carries no place of its own (a record out of its type,
    looked up in the shared table of its type's ordinals: `types.finite`) is placed at the
    action it stopped."""
    if e.span is None:
        e.span = span


def _fmt(t: Type, v) -> str:
    import json
    j = to_json(t, v)
    return json.dumps(j) if not isinstance(j, str) else j


class CompiledAction:
    def __init__(self, a: ir.Action, game: "Game"):
        self.ir = a
        self.name = a.name
        self.chance = a.chance
        self.game = game
        cc = game.concrete
        self.frame = a.frame + 1
        self.domains = [(b.slot + 1, cc.domain(b.domain)) for b in a.params]
        # Only a seq can list the same value twice; other domains need no de-duplication.
        self.seq_domain = any(isinstance(b.domain, ir.CollDomain) and
                              isinstance(b.domain.coll.type, SeqT) for b in a.params)
        self.run = cc.stmts(a.body)
        self.weight = cc.expr(a.weight) if a.weight is not None else None
        # The leading requires/lets decide legality without touching the state: playouts use
        # them to filter candidates and apply only the move they pick.
        k = 0
        while k < len(a.body) and isinstance(a.body[k], (ir.Requires, ir.LetStmt)):
            k += 1
        prefix = a.body[:k]
        seen: dict = {}

        def locals_used(e):             # asked several times of each requires below
            got = seen.get(id(e))
            if got is None:
                got = seen[id(e)] = _locals_used(e)
            return got
        # A search (`reachable`) is asked per candidate: a playout asks it of a drawn move only.
        hoist = []
        for st_ in prefix:
            if isinstance(st_, ir.Requires) and not locals_used(st_.cond) \
                    and not searches_in(st_.cond):
                hoist.append(st_)
            else:
                break
        self.hoisted = bool_check(cc, hoist)
        # The first check after them, when it reads the first parameter alone (a move's
        # piece must be the player's): in a long random draw its verdict is kept per value.
        # (Its other locals are its own binders: no let of the prefix comes before it.)
        nxt = prefix[len(hoist)] if len(prefix) > len(hoist) else None
        self.first_cond = nxt.cond if len(a.params) > 1 and \
            isinstance(nxt, ir.Requires) and \
            locals_used(nxt.cond) & {b.slot for b in a.params} == {a.params[0].slot} \
            else None
        self.first_test = cc.expr(self.first_cond) if self.first_cond is not None else None
        self.guard_check = bool_check(cc, prefix[len(hoist):])
        # The same without that first check, for a candidate whose first value passed it
        # (its verdict known, without an error): the draw does not test it twice.
        self.guard_after_first = bool_check(cc, prefix[len(hoist) + 1:]) \
            if self.first_cond is not None else None
        # The requires after it that read no other field: verdicts per candidate (draws.py).
        self.static_test, self.guard_after_static = draws.static_prefix(
            cc, self.first_cond, prefix[len(hoist) + 1:], bool_check)
        self.first_env = [None] * self.frame    # reused by each first check (draws.py)
        # Reused by each candidate a draw tries (draws.successor): every slot its guard and
        # body read is written first (its parameters, lets and binders), as `_enabled`'s
        # reused frame relies on; a frame of hundreds of slots costs more than its check.
        self.draw_env = [None] * self.frame
        self.first_column = draws.first_column(cc, self.first_cond,
                                               [b.slot for b in a.params]) \
            if self.first_cond is not None else None
        # The body after that prefix: run once the prefix has passed (its lets are in env).
        self.rest = cc.stmts(a.body[k:])
        # A leading `requires` that reads only the first binders can reject a value of those
        # before the later binders are enumerated: move(a, c) tries c only for the a's that
        # pass the requires reading a alone.
        pslots = [b.slot for b in a.params]
        let_slots = {x.slot for x in prefix if isinstance(x, ir.LetStmt)}
        self.prune: list[list] = [[] for _ in a.params]
        for x in prefix:
            if not isinstance(x, ir.Requires):
                continue
            used = locals_used(x.cond)
            idx = [i for i, ps in enumerate(pslots) if ps in used]
            if used & let_slots or not idx or max(idx) >= len(pslots) - 1:
                continue
            self.prune[max(idx)].append(cc.expr(x.cond))
        # The same hoisted checks, split for playouts: leading `field == constant` tests on the
        # state (`gates`, compared inline or dispatched on), leading constant conditions decided
        # now (`never` when one is false), then the rest in their order (`residual`).
        self.gates, self.never, residual = split_gates(cc, hoist, self.frame)
        # A `field == constant` test anywhere in the prefix, alone or as a conjunct of a
        # requires that reads no parameter (after an `extend a before` rule, say), is a gate
        # too: a necessary condition that cannot fail to evaluate, so testing it first changes
        # no verdict; the requires it came from is still checked in full.
        more = tuple(g for r in prefix if isinstance(r, ir.Requires) and not locals_used(r.cond)
                     for g in conjunct_gates(r.cond))
        self.gates += tuple(g for g in dict.fromkeys(more) if g not in self.gates)
        self.residual = bool_check(cc, residual)
        # A requires that reads no parameter but comes after one that does (a base rule's
        # phase test after an `extend a before` rule that reads the move's parameter) is
        # tested once per state too, before the instances: false, every instance is refused
        # (at it or at an earlier requires); an evaluation error decides nothing, and the full
        # prefix still runs per instance.  So the phase and flags close an extended action
        # before its parameters are enumerated, as they do for the base's.
        late = tuple(cc.expr(r.cond) for r in prefix[len(hoist):]
                     if isinstance(r, ir.Requires) and not locals_used(r.cond)
                     and gate(r.cond) is None and not searches_in(r.cond))
        if late:
            first = self.residual

            def residual_and_late(st, env, first=first, late=late):
                return (first is None or first(st, env)) and passes(late, st, env)
            self.residual = residual_and_late
        self._fast_instances = instances_fn(cc, a, self.seq_domain)
        # `candidates` itself where no requires prunes them and nothing is pinned.
        self.quick = self._fast_instances if not any(self.prune) else None
        # Parameters over types and constant ranges: the same tuples in every state.
        self.fixed = fixed_instances(a)
        self.draw_weights = weights_fn(cc, a) if self.guard_check is None else None
        self.slot0 = self.domains[0][0] if len(self.domains) == 1 else None
        self.slots = tuple(slot for slot, _ in self.domains)    # where the parameters go

    def is_open(self, st) -> bool:
        """Whether the hoisted requires hold in ``st`` (they read no parameter)."""
        if self.never:
            return False
        for i, v in self.gates:
            if st[i] != v:
                return False
        return self.residual is None or bool(self.residual(st, [None] * self.frame))

    @cached_property
    def messages(self) -> dict[str, str]:
        """Rule name -> message, for the `requires` of the action (and the procs inlined in
        it), "bounds" for a value leaving its type's range."""
        out = {"bounds": "a value would leave its type's range"}
        for s in nodes(self.ir):
            if isinstance(s, ir.Requires):
                out.setdefault(s.name, s.message)
        return out

    @cached_property
    def sym(self):
        sc = self.game.symbolic
        return ([(b.slot + 1, sc.domain(b.domain)) for b in self.ir.params], sc.stmts(self.ir.body))

    # ---- concrete ------------------------------------------------------------------------

    def instances(self, st) -> list[tuple]:
        """Every parameter tuple from the parameters' domains in state ``st``."""
        if self._fast_instances is not None:
            return self._fast_instances(st)
        if self.fixed is not None:
            return list(self.fixed)
        env = [None] * self.frame
        if not self.domains:
            return [()]
        if len(self.domains) == 1:
            fd = self.domains[0][1]
            if self.seq_domain:
                return list(dict.fromkeys((v,) for _, v in fd(st, env)))
            return [(v,) for _, v in fd(st, env)]
        out: list[tuple] = []
        seen = set()

        def rec(i, acc):
            if i == len(self.domains):
                t = tuple(acc)
                if t not in seen:
                    seen.add(t)
                    out.append(t)
                return
            slot, fd = self.domains[i]
            for _, v in fd(st, env):
                env[slot] = v
                acc.append(v)
                rec(i + 1, acc)
                acc.pop()
        rec(0, [])
        rec = None      # the closure's cycle (it holds the state): freed now, not by the collector
        return out

    def candidates(self, st, pins: tuple | None = None) -> list[tuple]:
        """`instances`, less those an early `requires` on the first binders already refuses
        (a rule that cannot be evaluated for them keeps them: `apply` will say why), and,
        with ``pins``, those whose arguments differ from the pinned values (see `pins_of`)."""
        if not any(self.prune):
            insts = self.instances(st)
            return insts if pins is None else [ps for ps in insts if matches(pins, ps)]
        pins = pins or (None,) * len(self.domains)
        env = [None] * self.frame
        out: list[tuple] = []
        seen = set()
        last = len(self.domains) - 1

        def rec(i, acc):
            slot, fd = self.domains[i]
            pin = pins[i]
            for _, v in fd(st, env):
                if pin is not None and v != pin:
                    continue
                env[slot] = v
                if self.prune[i] and not passes(self.prune[i], st, env):
                    continue
                acc.append(v)
                if i == last:
                    t = tuple(acc)
                    if t not in seen:
                        seen.add(t)
                        out.append(t)
                else:
                    rec(i + 1, acc)
                acc.pop()
        rec(0, [])
        rec = None      # as in `instances`
        return out

    def legal_into(self, res: list, st, pins: tuple | None, shown: bool) -> None:
        """`Game.legal` for this action, its gates passed: each legal move appended to
        ``res`` as (move, new state, shows)."""
        quick = self.quick
        insts = quick(st) if quick is not None and pins is None else self.candidates(st, pins)
        if not insts or (self.residual is not None
                         and not self.residual(st, [None] * self.frame)):
            return
        pre, rest, slots, frame, slot0 = (self.guard_check, self.rest, self.slots,
                                          self.frame, self.slot0)
        name = self.name
        try:
            for params in insts:
                env = [None] * frame
                if slot0 is not None:
                    env[slot0] = params[0]
                else:
                    for slot, v in zip(slots, params):
                        env[slot] = v
                if pre is not None and not pre(st, env):
                    continue
                shows: list | None = [] if shown else None
                try:
                    st2 = rest(st, env, shows)
                except Refused:
                    continue
                res.append((Move(name, params), st2, shows))
        except EvalError as e:
            _locate(e, self.ir.span)
            raise

    def apply(self, st, params: tuple, check_domain: bool = False):
        """Return ``(new state, shown items)`` or raise `Refused` naming the rule."""
        env = [None] * self.frame
        for (slot, fd), v in zip(self.domains, params):
            if check_domain and v not in [x for _, x in fd(st, env)]:
                b = self.ir.params[[s for s, _ in self.domains].index(slot)]
                raise Refused("domain", f"{_fmt(b.domain.elem, v)} is not in the domain of "
                              f"`{b.name}`", self.ir.span)
            env[slot] = v
        shows: list = []
        try:
            return self.run(st, env, shows), shows
        except EvalError as e:
            _locate(e, self.ir.span)
            raise

    # ---- symbolic ------------------------------------------------------------------------

    def sym_instances(self, st) -> list[tuple[object, tuple]]:
        """Every (guard, parameters) of the domains over a possibly symbolic state."""
        doms, _ = self.sym
        env = [None] * self.frame
        out = []

        def rec(i, g, acc):
            if i == len(doms):
                out.append((g, tuple(acc)))
                return
            slot, fd = doms[i]
            for gi, v in fd(st, env):
                g2 = dz.and_(g, gi)
                if g2 is False:
                    continue
                env[slot] = v
                acc.append(v)
                rec(i + 1, g2, acc)
                acc.pop()
        rec(0, True, [])
        # The same concrete parameters may come from several slots of a symbolic seq.
        merged: dict = {}
        order = []
        for g, p in out:
            if dz.is_concrete(p):
                if p in merged:
                    merged[p] = dz.or_(merged[p], g)
                else:
                    merged[p] = g
                    order.append(p)
            else:
                order.append(("#sym", len(order), p, g))
        res = []
        for p in order:
            if isinstance(p, tuple) and p and p[0] == "#sym":
                res.append((p[3], p[2]))
            else:
                res.append((merged[p], p))
        return res

    def sym_apply(self, st, params: tuple) -> list:
        """Return one ``(guard, new state, ctx)`` per path, for parameters (concrete or
        symbolic); the guard includes the path's condition."""
        doms, run = self.sym
        env = [None] * self.frame
        for (slot, _), v in zip(doms, params):
            env[slot] = v
        out = []
        for st2, ctx in run(st, SymCtx(True, env)):
            guard = dz.and_(ctx.pc, dz.all_(g for _, g in ctx.guards))
            if guard is not False:
                out.append((guard, st2, ctx))
        return out


class Game:
    """One game under chosen parameters and readings."""

    @gc_paused()
    def __init__(self, program: ir.Program, symbols: Symbols):
        self.p = program
        self.symbols = symbols   # what checking left: declarations, files, readings chosen
        self.name = program.name
        self.state_type = program.state_type
        self.concrete = Compiler(False, self.state_type)
        self.symbolic = Compiler(True, self.state_type)
        self.concrete.searches = self.symbolic.searches = Searches(self)
        self.actions = [CompiledAction(a, self) for a in program.actions]
        self._by_name = {a.name: a for a in self.actions}
        self._init_run = self.concrete.stmts(program.init) if program.init else None
        self._terminal = self.concrete.expr(program.terminal) if program.terminal else None
        self._actor = self.concrete.expr(program.actor) if program.actor else None
        self._terminal_env = program.terminal_frame + 1     # their frames' sizes
        self._actor_env = program.actor_frame + 1
        self._exprs: dict = {}
        self._openers: dict = {}
        self._compiled: dict = {}
        self._terminal_gate = gate(program.terminal) if program.terminal else None

    @property
    def source(self) -> str:
        """The spec file of the game itself (its base when loaded with expansions): the name
        under which `load_game` finds it again, whether it was given by name or by path."""
        return self.p.files[0]

    @property
    def extensions(self) -> tuple[str, ...]:
        """The files of the expansions it was loaded with, as `load_game` takes them back."""
        return tuple(self.p.files[1:])

    def action(self, name: str) -> CompiledAction:
        if name not in self._by_name:
            raise InputError(f"unknown action {name!r} (actions: "
                             f"{', '.join(a.name for a in self.actions)})")
        return self._by_name[name]

    @cached_property
    def field_index(self) -> dict[str, int]:
        return {f.name: i for i, f in enumerate(self.p.state)}

    # ---- states ----------------------------------------------------------------------

    def default_state(self):
        return default(self.state_type)

    def initial(self):
        """The initial state (computed once: `init` is deterministic, chance comes later)."""
        return self._initial

    def state_from_json(self, obj, where: str = "state"):
        """A state from a JSON object of fields, as `rulebook moves --state` reads it: the
        fields not given keep their initial value.  `InputError` names ``where.field``."""
        if not isinstance(obj, dict):
            raise InputError(f"{where}: a state is a JSON object of fields")
        st = list(self.initial())
        for k, v in obj.items():
            if k not in self.field_index:
                raise InputError(f"{where}.{k}: not a state field of {self.name}")
            i = self.field_index[k]
            st[i] = from_json(self.p.state[i].type, v, f"{where}.{k}")
        return tuple(st)

    @cached_property
    def _initial(self):
        st = self.default_state()
        if self._init_run is None:
            return st
        env = [None] * (self.p.init_frame + 1)
        try:
            return self._init_run(st, env, [])
        except Refused as r:
            raise EvalError(f"init fails its own rule {r.rule}: {r.message}", r.span) from None

    def compiled(self, node, symbolic: bool = False):
        """The closure of an IR expression (or a tuple of statements), compiled once per game:
        the puzzle runner evaluates the same goal, objective and checks for every puzzle."""
        key = (id(node), symbolic)
        hit = self._compiled.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        comp = self.symbolic if symbolic else self.concrete
        fn = comp.stmts(node) if isinstance(node, tuple) else comp.expr(node)
        self._compiled[key] = (node, fn)     # holds the node: its id is not reused meanwhile
        return fn

    def run_stmts(self, stmts, frame: int, st, env=None):
        if not stmts:
            run = lambda s, e, c: s  # noqa: E731
        elif isinstance(stmts, tuple):
            run = self.compiled(stmts)
        else:
            run = self.concrete.stmts(tuple(stmts))
        env = env if env is not None else [None] * (frame + 1)
        return run(st, env, [])

    def holds(self, inv: ir.Invariant, st, old=None) -> bool:
        """Whether an invariant (or, with ``old``, a transition property) holds of a state."""
        env = [old] + [None] * inv.frame
        return bool(self.compiled(inv.expr)(st, env))

    def holds_symbolic(self, inv: ir.Invariant, st, old=None):
        """The invariant over a symbolic state, as one z3 Boolean term."""
        env = [old] + [None] * inv.frame
        return dz.lift(self.symbolic.expr(inv.expr)(st, env))

    def is_terminal(self, st) -> bool:
        if self._terminal_gate is not None:
            i, v = self._terminal_gate
            return st[i] == v
        return bool(self._terminal(st, [None] * self._terminal_env)) if self._terminal else False

    def actor(self, st):
        return self._actor(st, [None] * self._actor_env) if self._actor else None

    # ---- expressions by text (the CLI and tools evaluate defs such as score(p)) -----------

    def expr(self, text: str, bindings: dict[str, Type] | None = None, symbolic: bool = False):
        """Compile an expression over the state, with named locals; return (fn, type, names)."""
        key = (text, tuple(sorted((bindings or {}).items(), key=lambda kv: kv[0])), symbolic)
        if key in self._exprs:
            return self._exprs[key]
        e, slots, frame = check_expression(self.symbols, text, bindings)
        names = [s + 1 for s in slots]
        comp = self.symbolic if symbolic else self.concrete
        f = comp.expr(e)
        size = frame + 1

        def call(st, *args):
            env = [None] * size
            for s, v in zip(names, args):
                env[s] = v
            return f(st, env)
        res = (call, e.type)
        self._exprs[key] = res
        return res

    def has_def(self, name: str) -> bool:
        return name in self.p.defs

    # ---- moves ----------------------------------------------------------------------

    def moves(self, st, chance: bool | None = None):
        """Every action instance with its outcome: (move, new state, shows) or (move, Refused)."""
        out = []
        for a in self.actions:
            if chance is not None and a.chance != chance:
                continue
            for params in a.instances(st):
                m = Move(a.name, params)
                try:
                    st2, shows = a.apply(st, params)
                    out.append((m, st2, shows, None))
                except Refused as r:
                    out.append((m, None, None, r))
        return out

    def legal(self, st, actions=None, shown: bool = True):
        """Every legal move with its outcome: (move, new state, shows), in the actions' and
        the instances' order.  Without ``shown``, the shows are None (not rendered: a search
        that shows only the moves of its answer replays them with `apply`)."""
        res = []
        for a in self.actions:
            if a.never or actions is not None and a.name not in actions:
                continue
            # The hoisted requires lead the body: when they fail, every instance is refused.
            # Their gates (`field == constant`, which cannot fail to evaluate) are tested
            # before the candidates are listed, as a playout's draw does.
            for i, v in a.gates:
                if st[i] != v:
                    break
            else:
                a.legal_into(res, st, pins_of(actions, a.name), shown)
        # The successors of the last state asked about are kept: a solver's answer is replayed
        # move by move from a state whose moves were just listed, and a move can be costly (an
        # `exists real` per placement).
        if shown:
            self._succ = (st, {m: (st2, shows) for m, st2, shows in res})
        return res

    _succ: tuple = (None, {})

    def apply(self, st, move: Move, check_domain: bool = True):
        seen, succ = self._succ
        if seen is not None and move in succ and (seen is st or seen == st):
            st2, shows = succ[move]
            return st2, list(shows)
        return self.action(move.action).apply(st, move.params, check_domain=check_domain)

    def move_via(self, st, name: str, params: tuple) -> list:
        """The regions the move's `show ... via` statements name in ``st`` (before the move),
        as (type, value) pairs: the squares it passes, for a picture; [] if it is refused."""
        a, log = self.action(name), ShowLog()
        env = [None] * a.frame
        for (slot, _), v in zip(a.domains, params):
            env[slot] = v
        try:
            a.run(st, env, log)
        except (Refused, EvalError):
            return []
        return log.via

    # ---- playouts -----------------------------------------------------------------------

    # Python's cycle collector is off for the game (`gc_paused`): a playout makes millions
    # of short-lived tuples and next to no cycles, and each collection rescans what the
    # memos keep (a board game's playouts spent 6-10 % of their time in collections).
    @gc_paused()
    def playout(self, rng: random.Random, max_steps: int = 100000):
        """Play one game with uniformly random players and weighted chance; return
        (final state, number of moves)."""
        st = self.initial()
        n = 0
        chance = self._opener([a for a in self.actions if a.chance])
        players = self._opener([a for a in self.actions if not a.chance])
        is_terminal, draw = self.is_terminal, self._draw
        while not is_terminal(st):
            if n >= max_steps:
                raise EvalError(f"no end after {max_steps} moves")
            picked = draw(st, rng, chance, True) or draw(st, rng, players, False)
            if picked is None:
                raise EvalError("no legal move in a state that is not terminal "
                                f"(after {n} moves)")
            st = picked[2]
            n += 1
        return st, n

    def _opener(self, actions) -> "_Opener":
        key = tuple(actions)
        op = self._openers.get(key)
        if op is None:
            op = self._openers[key] = _Opener(key)
        return op

    def _enabled(self, st, opener: "_Opener"):
        """Candidates that pass their action's guard prefix: (action, params, weight)."""
        out = []
        for a in opener(st):
            pre = a.guard_check
            if a.draw_weights is not None:
                # Drawn from a bag with its counts as weights: the weights are the counts.
                params = a.instances(st)
                ws = a.draw_weights(st)
                if len(ws) == len(params) and (not ws or min(ws) > 0):
                    out.extend(zip(repeat(a), params, ws))
                    continue
            env = [None] * a.frame  # reused: each candidate sets its parameters first
            for params in a.instances(st):
                for (slot, _), v in zip(a.domains, params):
                    env[slot] = v
                if pre is not None and not pre(st, env):
                    continue
                w = 1
                if a.weight is not None:
                    w = a.weight(st, env)
                    if w <= 0:
                        continue
                out.append((a, params, w))
        return out

    def pick(self, st, rng: random.Random, actions, weighted: bool):
        """Pick a legal move at random among ``actions``; None when there is none."""
        picked = self._draw(st, rng, self._opener(actions), weighted)
        return None if picked is None else (Move(picked[0].name, picked[1]), picked[2])

    def _draw(self, st, rng: random.Random, opener: "_Opener", weighted: bool):
        """``(action, params, successor)`` of a random legal move, or None.  Weighted: by the
        actions' weights.  Otherwise uniformly, by rejection: draw a candidate among those
        left, drop it if refused, draw again.  Every legal move is equally likely, as with
        enumerating them first, and far fewer guards are evaluated (`draws.uniform`)."""
        if opener.field is not None and st[opener.field] not in opener.table:
            return None     # no action can be open in this phase
        if weighted or opener.weighted:
            opts = self._enabled(st, opener)
            while opts:
                if weighted:
                    i = rng.choices(range(len(opts)), weights=[w for _, _, w in opts])[0]
                else:
                    i = rng.randrange(len(opts))
                a, params, _ = opts[i]
                st2 = _run_rest(a, st, params)
                if st2 is not None:
                    return a, params, st2
                opts.pop(i)
            return None
        return draws.uniform(st, rng, opener(st), opener.cache)


def _run_rest(a: CompiledAction, st, params):
    """The successor of a candidate whose hoisted checks passed, or None when refused.  The
    rest of its guard prefix runs first (it sets the prefix's lets), then the body without
    rendering shown items."""
    env = [None] * a.frame
    for (slot, _), v in zip(a.domains, params):
        env[slot] = v
    try:
        if a.guard_check is not None and not a.guard_check(st, env):
            return None
        return a.rest(st, env, None)
    except Refused:
        return None
    except EvalError as e:
        _locate(e, a.ir.span)
        raise


class _Opener:
    """Which of a list of actions pass their hoisted checks in a state, in their order.  When
    they all first test the same state field against a constant (the phase, say), one lookup
    on that field picks the few that can be open."""

    def __init__(self, actions: tuple):
        self.weighted = any(a.weight is not None for a in actions)
        self.cache = draws.Cache()      # what draws.uniform keeps for these actions
        acts = [a for a in actions if not a.never]
        firsts = {a.gates[0][0] for a in acts if a.gates}
        self.field = None
        self.all = [(a, a.gates, a.residual) for a in acts]
        if acts and len(firsts) == 1 and all(a.gates for a in acts):
            self.field = firsts.pop()
            self.table: dict = {}
            for a in acts:
                self.table.setdefault(a.gates[0][1], []).append((a, a.gates[1:], a.residual))

    def __call__(self, st) -> list:
        cands = self.table.get(st[self.field], ()) if self.field is not None else self.all
        out = []
        for a, gates, residual in cands:
            for i, v in gates:
                if st[i] != v:
                    break
            else:
                if residual is None or residual(st, [None] * a.frame):
                    out.append(a)
        return out


def load_game(name: str, variants: tuple[str, ...] = (), params: tuple = (), digest=None):
    """Compile a game, by id (its `game` line: from spec/ or RULEBOOK_SPECS) or by the path of
    its .rules file, cached per variants, parameters, z3 context (`fresh_z3`) and the files it
    reads, their text included: an edited spec is compiled again in a long-lived process.
    ``digest``: their `texts_digest(name, variants, paths=True)`, if the caller just took it."""
    return _load_game(z3.main_ctx(), name, tuple(variants), tuple(params),
                      digest or texts_digest(name, tuple(variants), paths=True))


@lru_cache(maxsize=64)
@gc_paused()
def _load_game(ctx, name: str, variants: tuple[str, ...], params: tuple, digest: str) -> Game:
    found = spec_texts(name, variants)
    if found is None:                   # load_files says what is wrong
        files, readings = load_files(name, variants)
        return Game(*check_program(files, dict(params), readings, const_value))
    texts, readings = found
    return Game(*programcache.checked(texts, readings, params))


load_game.cache_clear = _load_game.cache_clear


@contextlib.contextmanager
def fresh_z3():
    """Within it, z3 starts afresh, for a search whose answer must not depend on what this
    process asked z3 before (a model follows the order in which terms were first made, so
    after other work the same query can give another valid model): a new main context, where
    `load_game` loads its games again, the old one main again after.  A search within it
    answers as in a fresh process (`queries.ascent`: one pair of readings)."""
    saved = z3.z3._main_ctx     # noqa: SLF001 - z3's own global, read by main_ctx()
    z3.z3._main_ctx = z3.Context()
    try:
        yield
    finally:
        z3.z3._main_ctx = saved


@lru_cache(maxsize=64)
def load_state_type(name: str, variants: tuple[str, ...] = (), params: tuple = ()) -> Type:
    """The state type `load_game` would give, checking only what the state depends on."""
    files, readings = load_files(name, tuple(variants))
    return state_type(files, dict(params), readings, const_value)


def load_path(path, variants: tuple[str, ...] = (), params: tuple = ()) -> Game:
    """Compile the spec file at ``path`` afresh (not cached; its `extends` base is looked up
    beside it, in spec/ and on RULEBOOK_SPECS)."""
    name = str(path)
    files, readings = load_files(name if is_path(name) else f"./{name}", tuple(variants))
    return Game(*check_program(files, dict(params), readings, const_value))
