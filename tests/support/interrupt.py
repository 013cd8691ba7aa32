"""Send a Ctrl-C to a running command once it says it is at some stage."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def interrupt(args: list, after: str, env=None, timeout: float = 120):
    """Run ``python -m solver ARGS``, send SIGINT a second after a stderr line holds
    ``after``; return (exit status, stdout, stderr)."""
    e = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    p = subprocess.Popen([sys.executable, "-m", "solver", *args], cwd=ROOT, env=e, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = []
    t0 = time.monotonic()
    for line in p.stderr:
        err.append(line)
        if after in line:
            time.sleep(1)
            p.send_signal(signal.SIGINT)
            break
        if time.monotonic() - t0 > timeout:
            p.kill()
            raise AssertionError(f"never said {after!r}: {''.join(err)}")
    out, rest = p.communicate(timeout=timeout)
    return p.returncode, out, "".join(err) + rest
