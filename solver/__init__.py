"""rulebook: the rules language implementation.

Pipeline: syntax (Lark) -> check (names, types, bounds) -> ir (typed, frozen) -> evaluate (one
compiler, two value domains: concrete Python values and Z3 terms) -> game (interpreter) /
symbolic (Z3 queries) -> puzzles, examples, proofs, ambiguities -> cli."""
