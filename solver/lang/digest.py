"""Digests of a checked spec: which stored results (ambiguity witnesses, proofs) are still
current.  Each reads the spec's source files through ``game.symbols.files`` or its checked
program ``game.p`` (any object with a ``symbols`` table and a program: a compiled
`engine.game.Game`), never the engine itself.

`spec_digest` hashes every file; `rules_digest` only the declarations that change what a move
does; `proof_digest` those and the invariants and transitions a proof read.  These three read
the text; `proof_ir_digest` and `rules_ir_digest` read the checked, lowered program instead
(`irdigest`), so that a doc string, a layout, a local's name or a reading whose chosen option
lowers to the same rules leaves a stored result current."""
from __future__ import annotations

from .check import check_program
from .irdigest import ir_digest, proof_parts, rules_parts


def spec_digest(game) -> str:
    """A digest of the spec files a game is made of: stored results name the spec they used."""
    import hashlib
    h = hashlib.sha256()
    for f in game.symbols.files:
        h.update(f.text.encode("utf-8"))
    return h.hexdigest()[:16]


# Declarations that only check the rules, never change what a move does: results that depend
# on the rules alone (ambiguity witnesses) need not be recomputed when only these change.
_CHECKS_ONLY = {"invariant_decl", "transition_decl", "example_decl", "puzzle_decl",
                "extend_puzzle_decl", "rotate_decl"}


# The declarations `rules_digest` knows by name: defs (kept when used), invariants and
# transitions (kept when a proof named them).
_NAMED = {"def_decl", "invariant_decl", "transition_decl"}


def rules_digest(game, keep: frozenset = frozenset(),
                 named: frozenset | None = None) -> str:
    """A digest of the game's rules alone: the spec files without their invariants,
    transitions, examples and puzzles (nor the defs only those use), so that adding an
    auxiliary invariant leaves stored ambiguity witnesses current.  A def is kept when any
    kept declaration names it (by identifier, a safe over-approximation).  ``keep`` names
    declaration kinds kept all the same (see `proof_digest`); ``named``, if given, keeps of
    those kinds only the declarations of these names."""
    import hashlib
    from lark import Token
    items = []                                   # (file index, item, decl kind, name)
    for k, f in enumerate(game.symbols.files):
        for it in f.tree.children:
            if getattr(it, "data", None) != "item":
                continue
            decl = it.children[-1]
            name = str(decl.children[0]) if decl.data in _NAMED else None
            items.append((k, it, decl.data, name))

    def names(it) -> set[str]:
        return {str(t) for t in it.scan_values(lambda v: isinstance(v, Token) and v.type == "NAME")}
    kept = [x for x in items if (x[2] not in _CHECKS_ONLY
                                 or (x[2] in keep and (named is None or x[3] in named)))
            and x[2] != "def_decl"]
    used: set[str] = set()
    for x in kept:
        used |= names(x[1])
    defs = [x for x in items if x[2] == "def_decl"]
    while True:
        new = [x for x in defs if x[3] in used and x not in kept]
        if not new:
            break
        for x in new:
            kept.append(x)
            used |= names(x[1])
    h = hashlib.sha256()
    for k, it, _, _ in sorted(kept, key=lambda x: (x[0], x[1].meta.start_pos)):
        h.update(_rules_text(game.symbols.files[k].text, it).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()[:16]


# Markers that change no rule: a field marked `internal` is only left out of pictures, and the
# `via` of a `show` only says how a picture draws a move.  Each is cut with the blanks after it
# (`internal` opens a line) or before it (`via` ends a statement).
_MARKERS = {"internal": "after", "show_via": "before"}


def _rules_text(text: str, it) -> str:
    """The text of the item ``it`` without its markers (each with its blanks, see above)."""
    start, end = it.meta.start_pos, it.meta.end_pos
    cuts = sorted((t.meta.start_pos, t.meta.end_pos, _MARKERS[t.data])
                  for t in it.iter_subtrees() if t.data in _MARKERS and not t.meta.empty)
    out, at = [], start
    for a, b, side in cuts:
        chunk = text[at:a]
        out.append(chunk.rstrip(" \t\n") if side == "before" else chunk)
        at = b
        while side == "after" and at < end and text[at] in " \t":
            at += 1
    out.append(text[at:end])
    return "".join(out)


def proof_digest(game, invariants=None) -> str:
    """A digest of what a proof of the invariants depends on: the rules and the invariants
    and transitions, not the examples and puzzles.  ``invariants``: the names of those a
    proof read, when it read only them (`rulebook prove --invariant N --alone` assumes no
    other): an invariant added since leaves it current."""
    return rules_digest(game, frozenset({"invariant_decl", "transition_decl"}),
                        None if invariants is None else frozenset(invariants))


def proof_ir_digest(game, invariants=None, legacy: bool = False) -> str:
    """A digest of the checked program a proof read (`irdigest.proof_parts`): the state and
    its start, the actions with the defs they reach, whose turn and when the game ends, and the
    invariants and transitions (those named in ``invariants``, when the proof read only them),
    under the game's parameters and readings.  Stored as ``proof_ir_sha256``.  ``legacy``:
    as it was made before the actions' slots were named by order (`irdigest`), for
    `docs/refresh.py --restamp`."""
    return ir_digest(proof_parts(game.p, invariants, legacy))


def rules_ir_digest(game) -> str:
    """A digest of the checked rules under every option of every reading (one option at a time,
    the others as chosen), with the readings' names and options: what the ambiguity witnesses
    of the game depend on.  Stored as ``rules_ir_sha256``."""
    sy = game.symbols
    parts = [("readings", tuple((r.name, tuple(o for o, _ in r.options), r.chosen)
                                for r in game.p.readings)),
             ("chosen", tuple(rules_parts(game.p)))]
    for r in game.p.readings:
        for opt, _ in r.options:
            if opt == r.chosen:
                continue
            p, _ = check_program(list(sy.files), dict(sy.params),
                                 {**sy.reading_choices, r.name: opt}, sy.const_value)
            parts.append((f"{r.name}:{opt}", tuple(rules_parts(p))))
    return ir_digest(parts)


def current(game, stored: dict) -> bool:
    """Whether stored results were made from the spec as it is, or from one that differs only
    where they do not look: by the checked program (``proof_ir_sha256``: proofs;
    ``rules_ir_sha256``: witnesses), else by the text of the rules (``proof_sha256``,
    ``rules_sha256``: results stored before the program digests)."""
    if stored.get("spec_sha256") == spec_digest(game):
        return True
    invariants = stored.get("proof_invariants")
    return any(key in stored and stored[key] == digest(game)
               for key, digest in (("proof_ir_sha256", lambda g: proof_ir_digest(g, invariants)),
                                   ("proof_sha256", lambda g: proof_digest(g, invariants)),
                                   ("rules_sha256", rules_digest),
                                   ("rules_ir_sha256", rules_ir_digest)))
