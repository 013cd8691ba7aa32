"""Helpers shared by test files of several layers (importable as `support.x` because
tests/ is on the path of the root conftest)."""
