"""Concrete states, boards, solids and ambiguity witnesses as text and SVG, driven by the
types alone."""
