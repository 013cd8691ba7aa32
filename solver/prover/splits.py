"""Case splits of the inductive step: the symbolic states it starts from, one per value of
the split fields (the actor's, and ``--split-on``'s), the action paths from each, split again
on the value a move gives a split field; and ``--split-lengths``: a step query checked case
by case over the lengths of the sequences the step changes."""
from __future__ import annotations

import itertools
import math
from dataclasses import replace

import z3

from ..engine import domains as dz
from ..engine.game import Game
from ..engine.symbolic import Unknown, branches, leaves
from ..lang import ir
from ..lang.errors import RulebookError
from ..lang.irwalk import nodes
from ..lang.types import BoolT, EnumT, IntT, finite
from . import nearby, terms

# At most this many cases when a step query is split over sequence lengths.
SPLIT_CASES = 600
# A quick tier of `split_tiers` (the case without the guard, then with it) that has proved
# fewer than one in TIER_SKIP_RATE of its first TIER_SKIP_AFTER cases of an (action,
# invariant) is no longer asked on that action's later paths: each case goes to the nearby
# conjuncts directly.  A conservation law over sequences needs the other invariants' counts
# of the same item on every case of the paths that change the actor, where the two quick
# tiers were more than half the time (and fetching the models of their failures an eighth).
TIER_SKIP_AFTER = 40
TIER_SKIP_RATE = 20


def _actor_field(game: Game) -> int | None:
    a = game.p.actor
    if isinstance(a, ir.Field) and isinstance(a.record, ir.StateRef):
        return a.index
    return None


def reads_field(e, index: int) -> bool:
    """Whether an IR expression reads a given field of the current state (or, through a bare
    `state`, possibly any field)."""
    refs = fields = 0
    for n in nodes(e):
        if isinstance(n, ir.StateRef) and not n.old:
            refs += 1
        elif isinstance(n, ir.Field) and isinstance(n.record, ir.StateRef) and not n.record.old:
            if n.index == index:
                return True
            fields += 1
    return refs > fields  # a state reference that is not the record of a field access


def split_fields(game: Game, names=()) -> list[int]:
    """The state fields the step is checked case by case over: the actor's, when the spec's
    `actor` is a state field, and those named (``prove --split-on``)."""
    t = game.state_type
    index = {n: i for i, (n, _) in enumerate(t.fields)}
    out = []
    for n in names:
        if n not in index:
            raise RulebookError(f"{game.name} has no state field named {n!r} "
                                f"(state fields: {', '.join(index)})")
        if not isinstance(t.fields[index[n]][1], (IntT, EnumT, BoolT)):
            raise RulebookError(f"--split-on {n}: only a bool, integer or enum field can be "
                                f"split into cases")
        out.append(index[n])
    ai = _actor_field(game)
    if ai is not None and ai not in out:
        out.append(ai)
    return out


def cases(game: Game, fresh: dz.Fresh, tag: str, split: list[int] | None = None) -> list:
    """Fresh symbolic states covering every state: one per combination of values of the
    ``split`` fields, those fields concrete.  With a concrete actor a move writes only the
    actor's part of the state; with a concrete kind of piece its cells are numbers."""
    t = game.state_type
    if split is None:
        split = split_fields(game)
    base = fresh.value(t, tag)
    out = []
    for combo in itertools.product(*(finite(t.fields[i][1]).values for i in split)):
        st = list(base)
        for i, v in zip(split, combo):
            st[i] = v
        out.append(tuple(st))
    return out


def case_count(game: Game, names=()) -> int:
    """How many cases `cases` gives under ``split_on`` ``names``, without making them."""
    t = game.state_type
    return math.prod(len(finite(t.fields[i][1]).values) for i in split_fields(game, names))


def split_after(game: Game, b, fields: list[int]) -> list:
    """The path ``b``, one path per value a split field may have after it when the move sets
    it to a term (the next player, the highest bidder): that term is replaced by the value
    wherever the successor reads it, under the guard that it has that value.  The successor
    then reads its split fields as numbers, as the state before it did: a count kept for
    every player but the one to move is a sum of the others, not a sum of `if`s over a term
    z3 must case-split itself."""
    t = game.state_type
    out = [b]
    for f in fields:
        nxt = []
        for b1 in out:
            term = b1.state[f]
            if not dz.is_sym(term):
                nxt.append(b1)
                continue
            for v in finite(t.fields[f][1]).values:
                val = dz.lift(v)
                guard = z3.simplify(z3.And(dz.lift(b1.guard), term == val))
                if z3.is_false(guard):
                    continue
                st = list(terms.substituted(b1.state, term, val))
                st[f] = v
                nxt.append(replace(b1, guard=guard, state=tuple(st)))
        out = nxt
    return out


def seq_lengths(S) -> dict:
    """The length constants of the symbolic sequences of a state: id -> (constant, capacity,
    depth), depth 0 for a sequence of the state itself, 1 for one inside it (a sequence in a
    sequence of sequences), and so on."""
    out = {}
    stack = [(S, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dz.SymSeq):
            if dz.is_sym(v.length):
                out[v.length.get_id()] = (v.length, len(v.slots), d)
            stack.extend((x, d + 1) for x in v.slots)
        elif isinstance(v, tuple):
            stack.extend((x, d) for x in v)
    return out


def _cases_of(split, lengths) -> int:
    return math.prod(lengths[i][1] + 1 for i in split)


class TooManyCases(Exception):
    """A step query that would split into more than SPLIT_CASES cases (or has none to split)."""


def split_tiers(local, guard, conj, name, items, readers, candidates, memo, lengths,
                changed_lengths, cache, key=None):
    """The tiers again, for one changed conjunct at a time and with the lengths of the
    sequences it reads fixed, case by case.  A conjunct that counts the items of a sequence is
    a sum of one `if` per slot of it, which z3 often gives up on when the step moves the
    sequence's length; once the length is a number it simplifies each slot to the item or to
    nothing, and each case takes milliseconds.  The lengths split are those of the new
    conjunct that the step changes or that it reads afresh (a length read alike before and
    after cancels out), and those the guard reads with them.  Raises TooManyCases when there
    is nothing to split or the cases are too many: the caller then uses the usual tiers.

    ``cache`` holds the (simplified) case queries already proved: an item pushed by any of
    the paths of an action gives the same query, which z3 then answers once.  A query is the
    whole formula checked, assumptions included, so a cached proof never outlives them.
    It also keeps, per ``key`` (action, invariant), how often each quick tier proved a case.
    """
    tried = cache.setdefault(("tiers", key), [[0, 0], [0, 0]])     # [asked, proved] each

    def quick(tier, q) -> bool:
        """Whether the quick tier proves ``q`` (False too when it is no longer asked)."""
        asked, proved = tried[tier]
        if asked >= TIER_SKIP_AFTER and proved * TIER_SKIP_RATE < asked:
            return False
        tried[tier][0] += 1
        if terms.unsat(local, q):
            tried[tier][1] += 1
            cache[q.get_id()] = q                   # keeps the term (and its id) alive
            return True
        return False
    plans = []
    for k, c2 in items:
        own = conj[name][k] if k < len(conj[name]) else z3.BoolVal(True)
        fo, fn = terms.free_vars(own, memo), terms.free_vars(c2, memo)
        split = (fn & lengths.keys()) & (changed_lengths | (fn - fo))
        if split and _cases_of(split, lengths) > SPLIT_CASES:
            # A new sequence pushed onto a sequence of sequences moves every inner one's
            # slots: fixing the outer length alone puts the new one in one place, and the
            # others then read alike before and after.
            top = min(lengths[i][2] for i in split)
            split = {i for i in split if lengths[i][2] == top}
        if split:
            more = split | (terms.free_vars(guard, memo) & lengths.keys() & (fo | fn))
            if _cases_of(more, lengths) <= SPLIT_CASES:
                split = more
        split = sorted(split)
        if not split or _cases_of(split, lengths) > SPLIT_CASES:
            raise TooManyCases
        plans.append((k, c2, own, split))
    for k, c2, own, split in plans:
        consts = [lengths[i][0] for i in split]
        near = None
        for vals in itertools.product(*[range(lengths[i][1] + 1) for i in split]):
            sub = [(c, z3.IntVal(v)) for c, v in zip(consts, vals)]
            g2 = z3.simplify(z3.substitute(guard, *sub))
            if z3.is_false(g2):
                continue
            goal = z3.simplify(z3.Not(z3.substitute(c2, *sub)))
            if z3.is_false(goal):
                continue
            own2 = z3.simplify(z3.substitute(own, *sub))
            q = z3.And(goal, own2)                  # without the guard: true of every path
            if q.get_id() in cache or quick(0, q):
                continue
            q = z3.And(g2, goal, own2)
            if q.get_id() in cache or quick(1, q):
                continue
            if near is None:
                # The conjuncts about the same few things first (`nearby.rare`), then all near.
                near = [z3.And(*pick(about, conj, readers, candidates, memo) or [z3.BoolVal(True)])
                        for pick, about in ((nearby.rare, z3.And(c2, own)),
                                            (nearby.near, z3.And(guard, c2)))]
            for i, around in enumerate(near):
                q = z3.And(g2, goal, own2, z3.simplify(z3.substitute(around, *sub)))
                if q.get_id() in cache:
                    break
                try:
                    model = terms.check_assume(local, q)
                except Unknown:
                    if i + 1 < len(near):
                        continue
                    raise
                if model is None:
                    cache[q.get_id()] = q
                    break
                if i + 1 == len(near):
                    return model
    return None



def paths(game: Game, S, fields: list[int], actions=None, part: tuple | None = None) -> list:
    """The action paths from the symbolic state ``S`` (one case), each split on the values
    its move gives the split ``fields`` (`split_after`); only those of ``actions`` (a set of
    action names) when given, in the game's order either way.  ``part`` (lo, hi): only
    those of each action's instances lo to hi - 1 (`instance_count`), a share of its paths
    in their order."""
    if actions is not None and not actions:
        return []
    kept = game.symbolic.abstraction.kept_paths()
    if kept is None:
        return _built(game, S, fields, actions, part)
    # Each action's paths kept under the reading that built them, by the state's terms: the
    # transition properties' pass starts from the inductive step's states (the same terms),
    # and finds its paths here instead of building them again (the paths are never changed
    # by their users).  The entry holds the state and the game, so that no id in its key is
    # reused while it lives.
    state = tuple(x.get_id() if dz.is_sym(x) else ("v", x) for x in leaves(game.state_type, S))
    out: list = []
    for a in game.actions:
        if actions is not None and a.name not in actions:
            continue
        key = (id(game), state, tuple(fields), a.name, part)
        hit = kept.get(key)
        if hit is None:
            hit = kept[key] = (game, S, _built(game, S, fields, {a.name}, part))
        out += hit[2]
    return out


def _built(game: Game, S, fields: list[int], actions, part) -> list:
    """`paths` built afresh, nothing kept."""
    return [b2 for b in branches(game, S, actions, None, part)
            for b2 in split_after(game, b, fields)]


def instance_count(game: Game, S, action: str) -> int:
    """How many instances ``action`` has from the symbolic state ``S``: what `paths`'s
    ``part`` numbers."""
    return len(next(a for a in game.actions if a.name == action).sym_instances(S))
