"""Run as `python -m caught_interrupt`: a KeyboardInterrupt ends a string `exec` and is caught,
as a Ctrl-C during a first import can be; then `python -m solver`'s own exit with status 130
(argv[1] "plain": a plain `SystemExit(130)` instead)."""
import sys

try:
    exec("raise KeyboardInterrupt", {})
except KeyboardInterrupt:
    pass
if sys.argv[1:] == ["plain"]:
    raise SystemExit(130)
from solver.__main__ import exit_with  # noqa: E402

exit_with(130)
