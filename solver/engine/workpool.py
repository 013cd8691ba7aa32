"""Dask distributed workers for long work, whoever sends it (the prover's step, `play`'s games):
a local cluster of worker processes on this machine, started when first needed and stopped at
the end, or a running scheduler and its workers on other machines, whose address is checked to
answer before any work (`connect`).

A task carries plain data only: a `Recipe` says how a worker loads the game again, and what a
worker keeps between tasks (the game loaded, a prover's step built) lives in a worker plugin
(`workerside`), not in a module.  `Pool.ordered` streams the results of many tasks back in the
order they were sent, as they finish: a run stopped part-way keeps a prefix of its work.
Dask is imported only when a cluster is started or reached (it takes seconds)."""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass

from ..lang.errors import RulebookError
from ..lang.sources import is_path, texts_digest
from .game import Game, load_game

# How long `connect` waits for a scheduler to answer (s).
CONNECT_S = 3.0
# At most this many local worker processes (each holds a game, and a prover's step).
MAX_LOCAL = 64
# Work is done in the caller's own process until it has taken this long (s); only then does a
# local cluster start (1-2 s on this machine) for the rest (`Pool.ahead`): a run of a moment
# starts none.  (Started in a thread while the work went on here, it took 3-7 s on a loaded
# machine, the work holding the interpreter's lock, and a run of a few seconds then waited
# for a cluster it did not use.)
LOCAL_S = 1.0
# Dask's settings for a local cluster (`start_local`); workers on other machines are started
# by their owner, with the same settings where they can (docs/prover.md).  Its workers run
# without the statistical profiler.  Every process of it checked its event loop's health every
# 20 ms and sampled the system every 500 ms, for warnings and a dashboard nobody reads: an idle
# cluster of two workers then cost the parent 57 ms of CPU a second and each worker 25 ms
# (9 s of CPU over an 80 s proof); once a second and every 10 s, 11 and 4 ms.
QUIET = {"distributed.worker.profile.enabled": False,
         "distributed.admin.tick.interval": "1s",
         "distributed.admin.system-monitor.interval": "10s"}
# At most this many tasks a worker in flight at once (`Pool.ordered`).
AHEAD = 4


@dataclass(frozen=True)
class Recipe:
    """How a worker loads the game again: its id or the absolute path of its .rules file
    (the same spec files must be there), the variants, the parameters and the digest of the
    spec's text as the sender read it (`texts_digest`): a worker whose files differ (edited
    since, or another checkout) refuses the work rather than answer for other rules."""

    game: str
    variants: tuple = ()
    params: tuple = ()
    digest: str = ""

    @staticmethod
    def of(name: str, variants=(), params=()) -> Recipe:
        """The recipe of ``load_game(name, variants, params)``: a path made absolute."""
        game = os.path.abspath(name) if is_path(name) else name
        return Recipe(game, tuple(variants), tuple(params), texts_digest(game, tuple(variants)))

    def load(self) -> Game:
        if self.digest and texts_digest(self.game, self.variants) != self.digest:
            raise RulebookError(f"{self.game}: the spec files on this worker are not those the "
                                "work was sent with (edited since, or another checkout)")
        return load_game(self.game, self.variants, self.params)


def check_local(workers: int) -> None:
    """Refuse more local worker processes than MAX_LOCAL, before any work."""
    if workers > MAX_LOCAL:
        raise RulebookError(f"--workers {workers}: at most {MAX_LOCAL} local worker processes "
                            f"(a cluster of more machines: --cluster)")


def start_local(workers: int) -> tuple:
    """A local cluster of ``workers`` processes (one thread each: z3 and the interpreter
    hold Python's lock) and its client: (cluster, client).  Dask's own logs are silenced but
    for the critical: a task's failure comes back with its result, and a loaded machine's
    shutdown race (a worker's heartbeat to a scheduler already closed) printed a page of
    tracebacks under the command's answer."""
    import dask
    from distributed import Client, LocalCluster
    # Each worker's statistical profiler (a stack sample every 10 ms, for the dashboard, which
    # is not shown) cost 9 % of the prover's check time on the workers (a 3x3 board's step: 58.2 s
    # of checks against 63.9 s with it), its deep stacks walked under the interpreter's lock.
    with _no_ctrl_c_in_children(), dask.config.set(QUIET):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", memory_limit=0,
                               silence_logs=logging.CRITICAL)
    try:
        return cluster, Client(cluster)
    except BaseException:
        cluster.close()
        raise


def stop_local(cluster, client) -> None:
    """Close ``client`` (if any) and ``cluster``, a local cluster `start_local` started, its
    worker processes killed first: nothing in them is needed any more (every result came
    back, or was given up), and a worker that let go of a prover's cases in order took up to
    2 s to stop (two workers: 1.9 s of a 62 s proof)."""
    pids = [w.pid for w in getattr(cluster, "workers", {}).values() if getattr(w, "pid", None)]
    if client is not None:
        client.close()
    # The scheduler's links to the killed workers break, and one that still had a message
    # to send logs it with a traceback (at INFO, after the cluster has given its handlers
    # their level back): nothing the user needs to see.  Only that logger is held, for the
    # kill and the close: the caller's own Dask logging is left alone.
    logger = logging.getLogger("distributed.batched")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        cluster.close()
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def _no_ctrl_c_in_children():
    """SIGINT ignored while the worker processes are started, which inherit that: a Ctrl-C
    at the terminal reaches the whole process group, and this process, which keeps what came
    back and closes the cluster, is the one to answer it (each worker dying of it printed
    tracebacks).  A Ctrl-C during the start itself (a second or two) is not seen.  Only in
    the main thread (elsewhere no handler can be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if old is None else old)


def client_at(address: str):
    """A client of the Dask scheduler at ``address``; one that does not answer within
    CONNECT_S is a `RulebookError` (one line), before any work."""
    try:
        from distributed import Client
    except ImportError:
        raise RulebookError("--cluster: needs Dask distributed (pip install "
                            "'distributed>=2024.1')") from None
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        return Client(address, timeout=CONNECT_S)
    except Exception as e:      # noqa: BLE001 - an address that does not answer, one line
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise RulebookError(f"--cluster {address}: no Dask scheduler answers there "
                            f"({why})") from None
    finally:
        logger.setLevel(level)


class Pool:
    """Dask workers: those of the scheduler at ``address`` (reached at once, `connect`), or a
    local cluster of ``workers`` processes this object starts when first needed (`start`);
    closed by its owner (a context manager).  Each worker gets the `workerside.Held` plugin."""

    def __init__(self, workers: int = 1, address: str | None = None):
        self.workers, self.address = workers, address
        self.client = None
        self._cluster = None
        if address is not None:
            self.client = client_at(address)
            self._ready()
        else:
            check_local(workers)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """The client closed, and the local cluster this pool started."""
        if self._cluster is not None:
            stop_local(self._cluster, self.client)
        elif self.client is not None:
            self.client.close()
        self._cluster = self.client = None

    def parallel(self) -> bool:
        """Whether work may go to workers at all: a scheduler, or more than one local worker."""
        return self.client is not None or self.workers > 1

    def start(self) -> bool:
        """The local cluster started if it is not yet (a scheduler's client: nothing to do);
        False where Dask is not installed (the work then stays in this process)."""
        if self.client is None:
            try:
                self._cluster, self.client = start_local(self.workers)
            except ImportError:
                self.workers = 1
                return False
            self._ready()
        return True

    def _ready(self) -> None:
        from . import workerside
        workerside.register(self.client)

    def ahead(self, began: float, local_s: float | None = None) -> bool:
        """Whether the caller should do its next piece of work itself: with no workers to
        send it to, or until it has worked LOCAL_S (since ``began``, a `time.monotonic`)
        with local workers not started yet (a short run pays no cluster start-up)."""
        if not self.parallel():
            return True
        if self.client is not None:
            return False
        return time.monotonic() - began < (LOCAL_S if local_s is None else local_s)

    def names(self) -> list:
        """The workers' addresses, sorted."""
        return sorted(self.client.scheduler_info().get("workers", {}))

    def ordered(self, fn, jobs: list, *args):
        """``fn(job, *args)`` for each of ``jobs`` on the workers, one task a job, at most
        AHEAD tasks a worker in flight (the next sent as one comes back: a run of thousands
        of tasks does not wait for them all to be sent, nor a Ctrl-C for them all to be
        cancelled); the results yielded in the order of ``jobs`` as soon as each and every
        one before it has come back.  A task that fails is a `RulebookError` (one line);
        leaving early (an exception, Ctrl-C, the consumer stopping) cancels the tasks not
        done."""
        from distributed import as_completed
        todo = iter(enumerate(jobs))
        place: dict = {}            # the tasks in flight: future -> its job's index
        # (a result is let go of once taken: the workers then forget it)

        def send():
            for i, job in todo:
                f = self.client.submit(fn, job, *args, pure=False)
                place[f] = i
                return f
            return None
        first = [send() for _ in range(AHEAD * max(1, len(self.names())))]
        got: dict = {}
        nxt = 0
        try:
            running = as_completed([f for f in first if f is not None])
            del first
            for f in running:
                try:
                    got[place.pop(f)] = f.result()
                except (KeyboardInterrupt, RulebookError):
                    raise
                except Exception as e:      # noqa: BLE001 - a worker's failure, one line
                    raise RulebookError(f"a Dask worker failed: {type(e).__name__}: "
                                        f"{e}") from None
                more = send()
                if more is not None:
                    running.add(more)
                while nxt in got:
                    yield got.pop(nxt)
                    nxt += 1
        finally:
            left = [f for f in place if not f.done()]
            if left and self.client is not None:
                self.client.cancel(left)


def pool(workers: int, address: str | None = None) -> Pool | None:
    """The workers ``--workers`` and ``--cluster`` ask for: None for one local worker (all
    in this process), else a `Pool` (a scheduler's checked to answer now)."""
    if address is None and workers <= 1:
        return None
    return Pool(workers, address)
