"""Text -> checked IR: the parser, the checker, the IR, the types and their JSON codec.

Imports no solver library (z3, SciPy, HiGHS) and no later layer."""
