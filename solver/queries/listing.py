"""A query's `legal` and `illegal` answers: every move of its `using` actions from the `from`
state, the legal ones and, for each other one, the rule that forbids it.

The interpreter lists them by applying every candidate.  The Z3 backend decides the same
questions over a symbolic copy of the state pinned to the concrete one: a candidate is in the
action's domain when its domain guard is satisfiable, legal when some path's guards are, and
otherwise refused by the first `requires` on its path that cannot hold once those before it
do.  Both lists come out in the same order (the actions' order, then the move's JSON)."""
from __future__ import annotations

import json

from ..engine import domains as dz
from ..lang import ir
from ..engine.evaluate import Refused, SymCtx
from ..engine.game import Game, Move
from ..engine.pins import allows, pin_guard
from ..engine.symbolic import Unknown, check, leaves, make_solver
from ..lang.errors import Disagreement


def _messages(a: ir.Action) -> dict[str, str]:
    """Rule name -> message, for the `requires` of an action (and the procs inlined in it)."""
    from ..lang.irwalk import nodes
    out = {"bounds": "a value would leave its type's range"}
    for s in nodes(a):
        if isinstance(s, ir.Requires):
            out.setdefault(s.name, s.message)
    return out


def _key(game: Game, m: Move):
    order = [a.name for a in game.actions]
    return (order.index(m.action), json.dumps(m.to_json(game)))


def search_listing(game: Game, st, actions) -> dict:
    legal, illegal = [], []
    for m, _st2, _shows, r in game.moves(st, chance=None):
        if actions and not allows(actions, m):
            continue
        if r is None:
            legal.append(m)
        else:
            illegal.append((m, r.rule, r.message))
    return _answer(game, legal, illegal)


def _answer(game: Game, legal, illegal) -> dict:
    legal = sorted(legal, key=lambda m: _key(game, m))
    illegal = sorted(illegal, key=lambda r: _key(game, r[0]))
    return {"legal": [m.to_json(game) for m in legal],
            "illegal": [{"move": m.to_json(game), "rule": rule, "why": why}
                        for m, rule, why in illegal]}


def z3_listing(game: Game, st, actions, timeout_ms: int) -> dict:
    t = game.state_type
    fresh = dz.Fresh("l_")
    S = fresh.value(t, "s")
    s = make_solver(timeout_ms, sides=game.symbolic.sides)
    s.add(*fresh.constraints)
    for a_, b_ in zip(leaves(t, S), leaves(t, st)):
        s.add(dz.lift(dz.leaf_eq(a_, b_)))
    legal, illegal = [], []

    def sat(*conds) -> bool:
        conds = [c for c in conds if c is not True]
        if any(c is False for c in conds):
            return False
        return check(s, *[dz.lift(c) for c in conds])

    try:
        for a in game.actions:
            if a.chance or (actions and a.name not in actions):
                continue
            msgs = _messages(a.ir)
            doms, run = a.sym
            for g, params in a.sym_instances(S):
                g = dz.and_(g, pin_guard(actions, a, params))
                if not sat(g):
                    continue
                if not dz.is_concrete(params):
                    s.push()
                    s.add(dz.lift(g))
                    check(s)
                    model = s.model()
                    s.pop()
                    params = tuple(dz.concretize(p.domain.elem, v, model)
                                   for p, v in zip(a.ir.params, params))
                m = Move(a.name, params)
                env = [None] * a.frame
                for (slot, _), v in zip(doms, params):
                    env[slot] = v
                paths = run(S, SymCtx(True, env))
                if any(sat(g, ctx.pc, *[c for _, c in ctx.guards]) for _, ctx in paths):
                    legal.append(m)
                    continue
                rule = None
                for _, ctx in paths:
                    if not sat(g, ctx.pc):
                        continue
                    held = [g, ctx.pc]
                    for name, c in ctx.guards:
                        if not sat(*held, c):
                            rule = name
                            break
                        held.append(c)
                    break
                if rule is None:
                    raise Unknown("no path of the refused move names a rule")
                illegal.append((m, rule, msgs.get(rule, "")))
    except Unknown:
        return {"legal": "unknown", "illegal": "unknown"}
    # Every answer is replayed in the interpreter before it is shown.
    for m in legal:
        game.apply(st, m, check_domain=True)
    for m, rule, _ in illegal:
        try:
            game.apply(st, m, check_domain=True)
        except Refused as r:
            if r.rule != rule:
                raise Disagreement(f"z3 says {m.label(game)} is refused by {rule}, "
                                   f"the interpreter by {r.rule}") from None
        else:
            raise Disagreement(f"z3 says {m.label(game)} is illegal, the interpreter plays it")
    return _answer(game, legal, illegal)
