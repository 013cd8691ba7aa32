"""A query's `legal` and `illegal` answers: every move of its `using` actions from the `from`
state, the legal ones and, for each other one, the rule that forbids it.

The interpreter lists them by applying every candidate.  The Z3 backend decides the same
questions with the symbolic evaluator's terms: a candidate is in the action's domain when its
domain guard is satisfiable, legal when some path's guards are, and otherwise refused by the
first `requires` on its path that cannot hold once those before it do.  The state is given to
the symbolic evaluator as it is, so what its concrete leaves decide folds to True or False
while the terms are built and z3 is asked only what stays symbolic (an `exists real`, a
parameter ranging over a symbolic collection): a symbolic copy pinned to the state by
equalities gave z3 the same questions at a cost of some 20 to 40 times the time (Clock
Towers).  Both lists come out in the same order (the actions' order, then the move's JSON)."""
from __future__ import annotations

import json

from ..engine import domains as dz
from ..engine.evaluate import Refused, SymCtx
from ..engine.game import Game, Move
from ..engine.pins import allows, pin_guard
from ..engine.symbolic import Unknown, check, make_solver
from ..lang.errors import Disagreement


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
    """`search_listing`'s answer, decided by the symbolic evaluator and z3 from the state
    ``st`` (concrete: every answer is replayed in the interpreter)."""
    S = st
    s = make_solver(timeout_ms, sides=game.symbolic.sides)
    legal, illegal = [], []

    def sat(*conds) -> bool:
        conds = [c for c in conds if c is not True]
        if any(c is False for c in conds):
            return False
        # Nothing asked: the solver holds no assertion but side conditions, each satisfiable
        # alone (fresh unknowns), so it is satisfiable.
        return check(s, *[dz.lift(c) for c in conds]) if conds else True

    try:
        for a in game.actions:
            if a.chance or (actions and a.name not in actions):
                continue
            msgs = a.messages
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
