"""The one evaluator and its two value domains (Python values, Z3 terms), compiled from the
IR, and `Game`: initial state, legal moves with reasons, apply, playouts, invariants."""
