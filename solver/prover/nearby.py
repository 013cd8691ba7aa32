"""Which assumptions a step query takes: the candidates' conjuncts that read what the goal
reads (near), or its rarely read variables (rare), indexed by who reads which variable."""
from __future__ import annotations

from . import terms

# A variable that at most this many conjuncts read is rare: a conjunct that reads one of the
# goal's rare variables is about the same few things (one key's count, kept by two
# invariants), where one that shares only common variables (a sequence's slots, which every
# count over that sequence reads) need not be.
RARE_READERS = 4
# A conjunct that reads more rare variables than this (a total over a whole map) is not
# followed further: every conjunct about an entry of that map would come with it.
HUB_RARE = 12


def conjunct_readers(conj: dict, memo: dict) -> tuple[dict, dict]:
    """Who reads what among the candidates' conjuncts: variable id -> the (name, index) of
    the conjuncts that read it, and (name, index) -> the variables it reads."""
    readers: dict[int, list] = {}
    reads: dict[tuple, frozenset] = {}
    for n, cs in conj.items():
        for k, c in enumerate(cs):
            fv = reads[(n, k)] = terms.free_vars(c, memo)
            for v in fv:
                readers.setdefault(v, []).append((n, k))
    return readers, reads


def rare(formula, conj, readers, candidates, memo) -> list:
    """The conjuncts of the candidate invariants that read a rare variable of ``formula``, and
    those that read a rare variable of one of these that is not a hub: a conservation law
    needs the same entry's count from another invariant, and, two steps away, what bounds an
    entry of it (an empty hand in this phase)."""
    def rare_of(vs):
        return {v for v in vs if len(readers.get(v, ())) <= RARE_READERS}
    frontier = rare_of(terms.free_vars(formula, memo))
    seen = set(frontier)
    chosen: dict = {}
    for _ in range(2):
        nxt: set = set()
        for v in frontier:
            for nk in readers.get(v, ()):
                n, k = nk
                if nk in chosen or n not in candidates or k >= len(conj[n]):
                    continue
                chosen[nk] = conj[n][k]
                more = rare_of(terms.free_vars(conj[n][k], memo))
                if len(more) <= HUB_RARE:
                    nxt |= more - seen
        seen |= nxt
        frontier = nxt
    return list(chosen.values())


def near(formula, conj, readers, candidates, memo) -> list:
    """The conjuncts of the candidate invariants that read a variable ``formula`` reads."""
    near = {nk for v in terms.free_vars(formula, memo) for nk in readers.get(v, ())
            if nk[0] in candidates}
    return [conj[n][k] for n, k in near if k < len(conj[n])]

