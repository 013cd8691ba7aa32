"""rulebook: the rules language implementation, in layers (ARCHITECTURE.md):

lang (text -> checked IR and a symbol table) -> engine (the one evaluator over concrete values
or Z3 terms, and `Game`) -> prover | queries (proofs; puzzles, listings, examples, ambiguities)
-> render (text and SVG) -> docs (the site's pages) -> cli.  Each imports only the layers
before it; tests/test_layers.py checks it."""
