"""A compiled game: the checked program with both domains of the one evaluator, and the
reference interpreter's operations (initial state, legal moves with reasons, apply, playouts)."""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property, lru_cache

from . import domains as dz
from . import ir
from .check import Checker, Frame, Scope, load_files
from .codec import to_json
from .errors import EvalError, InputError
from .evaluate import Compiler, Refused, SymCtx
from .irwalk import nodes
from .syntax import parse_expr
from .types import SeqT, Type, default


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
        param_slots = {b.slot for b in a.params}
        hoist = []
        for st_ in prefix:
            if isinstance(st_, ir.Requires) and not (locals_used(st_.cond) & param_slots) \
                    and not locals_used(st_.cond):
                hoist.append(st_)
            else:
                break
        self.hoisted = _bool_check(cc, hoist)
        self.guard_check = _bool_check(cc, prefix[len(hoist):])
        # The body after that prefix: run once the prefix has passed (its lets are in env).
        self.rest = cc.stmts(a.body[k:])

    @cached_property
    def sym(self):
        sc = self.game.symbolic
        return ([(b.slot + 1, sc.domain(b.domain)) for b in self.ir.params], sc.stmts(self.ir.body))

    # ---- concrete ------------------------------------------------------------------------

    def instances(self, st) -> list[tuple]:
        """Every parameter tuple from the parameters' domains in state ``st``."""
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
        return out

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
        return self.run(st, env, shows), shows

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

    def __init__(self, program: ir.Program, checker: Checker):
        self.p = program
        self.checker = checker
        self.name = program.name
        self.state_type = program.state_type
        self.concrete = Compiler(False, self.state_type)
        self.symbolic = Compiler(True, self.state_type)
        self.actions = [CompiledAction(a, self) for a in program.actions]
        self._by_name = {a.name: a for a in self.actions}
        self._init_run = self.concrete.stmts(program.init) if program.init else None
        self._terminal = self.concrete.expr(program.terminal) if program.terminal else None
        self._actor = self.concrete.expr(program.actor) if program.actor else None
        self._exprs: dict = {}

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

    def run_stmts(self, stmts, frame: int, st, env=None):
        run = self.concrete.stmts(tuple(stmts)) if stmts else (lambda s, e, c: s)
        env = env if env is not None else [None] * (frame + 1)
        return run(st, env, [])

    def is_terminal(self, st) -> bool:
        return bool(self._terminal(st, [None])) if self._terminal else False

    def actor(self, st):
        return self._actor(st, [None]) if self._actor else None

    # ---- expressions by text (the CLI and tools evaluate defs such as score(p)) -----------

    def expr(self, text: str, bindings: dict[str, Type] | None = None, symbolic: bool = False):
        """Compile an expression over the state, with named locals; return (fn, type, names)."""
        key = (text, tuple(sorted((bindings or {}).items(), key=lambda kv: kv[0])), symbolic)
        if key in self._exprs:
            return self._exprs[key]
        frame = Frame()
        sc = Scope({}, frame)
        names = []
        for n, t in (bindings or {}).items():
            slot = frame.new()
            names.append(slot + 1)
            sc = sc.bind(n, ir.Local(t, None, n, slot))
        tree = parse_expr(text)
        e = self.checker.expr(tree, sc)
        comp = self.symbolic if symbolic else self.concrete
        f = comp.expr(e)
        size = frame.size + 1

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

    def legal(self, st, actions=None):
        res = []
        for a in self.actions:
            if actions is not None and a.name not in actions:
                continue
            # The guard prefix first, as a plain bool (no exception per refused candidate):
            # games with many candidates per state (a block's orientations times the cells
            # of the building space) refuse most of them there.
            if a.hoisted is not None and not a.hoisted(st, [None] * a.frame):
                continue
            for params in a.instances(st):
                env = [None] * a.frame
                for (slot, _), v in zip(a.domains, params):
                    env[slot] = v
                if a.guard_check is not None and not a.guard_check(st, env):
                    continue
                shows: list = []
                try:
                    st2 = a.rest(st, env, shows)
                except Refused:
                    continue
                res.append((Move(a.name, params), st2, shows))
        return res

    def apply(self, st, move: Move, check_domain: bool = True):
        return self.action(move.action).apply(st, move.params, check_domain=check_domain)

    # ---- playouts -----------------------------------------------------------------------

    def playout(self, rng: random.Random, max_steps: int = 100000):
        """Play one game with uniformly random players and weighted chance; return
        (final state, number of moves)."""
        st = self.initial()
        n = 0
        chance_actions = [a for a in self.actions if a.chance]
        player_actions = [a for a in self.actions if not a.chance]
        while not self.is_terminal(st):
            if n >= max_steps:
                raise EvalError(f"no end after {max_steps} moves")
            picked = self._pick(st, rng, chance_actions, True) or \
                self._pick(st, rng, player_actions, False)
            if picked is None:
                raise EvalError("no legal move in a state that is not terminal "
                                f"(after {n} moves)")
            st = picked[1]
            n += 1
        return st, n

    def _enabled(self, st, actions):
        """Candidates that pass their action's guard prefix: (action, params, weight)."""
        out = []
        for a in actions:
            if a.hoisted is not None and not a.hoisted(st, [None] * a.frame):
                continue
            pre = a.guard_check
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

    def _pick(self, st, rng: random.Random, actions, weighted: bool):
        """Pick a legal move at random among ``actions``; None when there is none."""
        if not weighted:
            return self._pick_uniform(st, rng, actions)
        opts = self._enabled(st, actions)
        while opts:
            if weighted:
                i = rng.choices(range(len(opts)), weights=[w for _, _, w in opts])[0]
            else:
                i = rng.randrange(len(opts))
            a, params, _ = opts[i]
            try:
                st2, _ = a.apply(st, params)
                return Move(a.name, params), st2
            except Refused:
                opts.pop(i)
        return None


    def _pick_uniform(self, st, rng: random.Random, actions):
        """A uniformly random legal move, by rejection: draw a candidate among those left, drop
        it if refused, draw again.  Every legal move is equally likely, as with enumerating
        them first, and far fewer guards are evaluated."""
        cands = []
        for a in actions:
            if a.weight is not None:
                return self._pick_weighted_fallback(st, rng, actions)
            if a.hoisted is not None and not a.hoisted(st, [None] * a.frame):
                continue
            cands.extend((a, params) for params in a.instances(st))
        while cands:
            i = rng.randrange(len(cands))
            a, params = cands[i]
            cands[i] = cands[-1]
            cands.pop()
            env = [None] * a.frame
            for (slot, _), v in zip(a.domains, params):
                env[slot] = v
            if a.guard_check is not None and not a.guard_check(st, env):
                continue
            try:
                st2 = a.rest(st, env, None)     # nothing shown: no rendering
            except Refused:
                continue
            return Move(a.name, params), st2
        return None

    def _pick_weighted_fallback(self, st, rng, actions):
        opts = self._enabled(st, actions)
        while opts:
            i = rng.randrange(len(opts))
            a, params, _ = opts[i]
            try:
                st2, _ = a.apply(st, params)
                return Move(a.name, params), st2
            except Refused:
                opts.pop(i)
        return None


def _bool_check(cc: Compiler, stmts):
    """Compile requires/lets to ``f(st, env) -> bool`` (no exceptions on the hot path)."""
    if not stmts:
        return None
    steps = []
    for s in stmts:
        if isinstance(s, ir.Requires):
            steps.append((0, cc.expr(s.cond)))
        else:
            steps.append((s.slot + 1, cc.expr(s.value)))

    def check(st, env):
        for slot, f in steps:
            if slot:
                env[slot] = f(st, env)
            elif not f(st, env):
                return False
        return True
    return check


def locals_used(node) -> set[int]:
    """The frame slots an IR expression reads."""
    return {n.slot for n in nodes(node) if isinstance(n, ir.Local)}


@lru_cache(maxsize=64)
def load_game(name: str, variants: tuple[str, ...] = (), params: tuple = ()) -> Game:
    """Compile a game from spec/ (cached per variants and parameters)."""
    files, readings = load_files(name, tuple(variants))
    checker = Checker(files, dict(params), readings)
    return Game(checker.program(), checker)


def load_path(path, variants: tuple[str, ...] = (), params: tuple = ()) -> Game:
    """Compile a spec file given by path (its `extends` base is looked up in spec/)."""
    from pathlib import Path

    from .check import find_spec, read_source
    src = read_source(Path(path))
    files = [src]
    while files[0].base is not None:
        files.insert(0, read_source(find_spec(files[0].base)))
    readings = {}
    for v in variants:
        if ":" not in v:
            raise InputError(f"load_path takes readings (name:option) as variants, not {v!r}")
        r, _, o = v.partition(":")
        readings[r] = o
    checker = Checker(files, dict(params), readings)
    return Game(checker.program(), checker)
