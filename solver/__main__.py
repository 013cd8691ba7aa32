"""`python -m solver`: the `rulebook` command."""
from .cli.main import main


def exit_with(status: int):
    """Exit with ``status``.  Under `python -m`, CPython (3.11, 3.12) kills the process with a
    SIGINT at exit, whatever the status, once a KeyboardInterrupt has ended the code of a
    string `exec` or `eval` (as the class builders of `dataclasses` and `collections` run while
    a module is first imported), even when a caller caught it: a Ctrl-C the command handled
    (exit 130, its partial results printed) then came out as a death by signal, now and then.
    A string `exec` resets that flag, and nothing here can raise one after it."""
    exec("", {})
    raise SystemExit(status)


if __name__ == "__main__":
    exit_with(main())
