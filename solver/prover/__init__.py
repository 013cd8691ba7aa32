"""Invariants proved inductive, checked up to a depth, or refuted with a replayed trace;
the step's abstractions and symmetries are objects handed to the engine."""
