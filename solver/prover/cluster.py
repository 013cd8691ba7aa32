"""The inductive step's action paths (the invariants' and the transition properties') as
Dask distributed tasks: on a local cluster of worker processes that `Engine` starts once the
step has taken LOCAL_S in the proof's own process, or on a running scheduler and its workers
on other machines (`connect`).

Nothing z3 makes can be sent between processes, so a task carries plain data only: the run
(`Run`: how to load the game again, the `ProveOptions`, the invariants), the case, the actions
built there, the round's candidates and the paths' places.  Each worker loads the game and
builds the step's cases once per run (`workers.Runs`, a worker plugin: the state lives in the
worker, not in a module) and keeps them for the run's next tasks.  A task's verdicts come back
as it finishes (`as_completed`); the parent alone writes them into the journal or the store,
so a Ctrl-C keeps every verdict that came back.  A worker that dies mid-task: the scheduler
runs its tasks again on another (``distributed.scheduler.allowed-failures``, 3 by default); a
task is a pure function of its arguments, so the verdicts are the same.  Starting a local
cluster, reaching a scheduler and `Recipe` are `engine.workpool`'s, which `play` uses too.
Dask is imported only when a cluster is started or reached (it takes seconds)."""
from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass, field

from ..engine import workpool
from ..engine.game import Game
from ..engine.workpool import Recipe
from ..lang.errors import RulebookError
from .options import ProveOptions

# The step's paths are checked in the proof's own process until it has spent this long (s)
# on them, or the proof has run this long; only then does a local cluster start (a second or
# two) for the rest (`Engine.ahead`, `Engine.remote`).  What the proof's own process built of
# a case by then is dropped (the workers build the whole case): at 3 s, two workers of a
# one-minute proof started working 2 s later than at 1 s, the second core idle meanwhile.
LOCAL_S = 1.0
# At most this many paths a task, and about this many tasks a worker a batch: a worker dealt
# slow paths does not run alone while the others wait, and few verdicts are in flight.
CHUNK_MAX = 8
TASKS_PER_WORKER = 4
# An action's paths are built on the workers in at most this many shares a worker (ranges of
# its instances): an action of many paths (a card that moves a block from any square to any
# other) is most of a case's building, and built whole it kept one worker busy alone.
PARTS_PER_WORKER = 2


@dataclass(frozen=True)
class Run:
    """What every task of one pass of a proof's step carries: the recipe, the options, the
    candidate invariants (Houdini's) or the transition properties and, for those, the
    invariants ``assumed``; ``key`` names it on the workers."""

    recipe: Recipe
    options: ProveOptions
    invariants: tuple
    assumed: tuple | None = None
    key: str = field(default="", compare=False)
    # The pass's game and options alone: the runs of one pass (the invariants' step, then
    # the transition properties') share the game and its abstraction on a worker, as they
    # do in the proof's own process.
    base: str = field(default="", compare=False)

    @staticmethod
    def of(recipe: Recipe, options: ProveOptions, invariants, assumed=None) -> Run:
        assumed = None if assumed is None else tuple(assumed)
        game = [recipe.game, recipe.variants, recipe.params, recipe.digest, repr(options)]
        text = json.dumps([*game, list(invariants), assumed], default=str)
        return Run(recipe, options, tuple(invariants), assumed, _digest(text),
                   _digest(json.dumps(game, default=str)))


class Engine:
    """Where the step's paths are checked: a Dask client, on a local cluster this object
    starts when first needed (``workers`` processes, one thread each) or on the scheduler of
    ``client``; handed to `prove`, closed by its owner (a context manager)."""

    def __init__(self, recipe: Recipe, workers: int = 0, client=None,
                 address: str | None = None):
        self.recipe, self.workers, self.client, self.address = recipe, workers, client, address
        self._cluster = None
        self.spent = 0.0        # seconds this process has spent checking paths (`ahead`)
        self.costs = Costs()    # what an action's path takes, for the order of the tasks
        self.began = time.monotonic()       # `remote`: how long the proof has run
        if client is not None:
            from . import workers
            workers.register(client)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """The client closed, and the local cluster this engine started."""
        if self._cluster is not None:
            workpool.stop_local(self._cluster, self.client)
        elif self.client is not None:
            self.client.close()
        self._cluster = self.client = None

    def run(self, options: ProveOptions, invariants, assumed=None) -> Run:
        return Run.of(self.recipe, options, invariants, assumed)

    def ahead(self, paths: list, check) -> list:
        """Check ``paths`` in this process (``check(part)``, a part at a time) while the run
        has spent under LOCAL_S doing so, and return the rest, for the workers (the local
        cluster started for them): a proof of seconds, or one the store answers, pays no
        cluster start-up.  With a client already, every path is for the workers."""
        if self.client is not None:
            return paths
        if self.workers <= 1:
            check(paths)
            return []
        at = 0
        while at < len(paths) and self.spent < LOCAL_S:
            t0 = time.monotonic()
            part = paths[at:at + CHUNK_MAX]
            check(part)
            self.spent += time.monotonic() - t0
            at += len(part)
        if at < len(paths):
            try:
                self._start()
            except ImportError:
                # No Dask here (an install without it): the rest in this process too.
                self.workers = 1
                check(paths[at:])
                return []
        return paths[at:]

    def remote(self) -> bool:
        """Whether the next case's paths go to the workers whole, built there and never in
        this process (`plan`): with a client already, or, with more than one worker, once
        this engine has existed LOCAL_S (the proof's loading, bounded model checking and
        building included), the local cluster then started.  Before that, and with one
        worker, a case is built here (`ahead`)."""
        if self.client is not None:
            return True
        if self.workers <= 1:
            return False
        if time.monotonic() - self.began < LOCAL_S and self.spent < LOCAL_S:
            return False
        try:
            self._start()
        except ImportError:
            self.workers = 1
            return False
        return True

    def plan(self, run: Run, kind: str, ci: int, game: Game, S, actions: list) -> dict | None:
        """``actions``' paths in case ``ci`` (the symbolic state ``S``) of the step
        (``kind``: "induction" or "transitions") built on the workers, each action in up to
        PARTS_PER_WORKER shares a worker (ranges of its instances, `splits.paths`), one task a
        share: action -> its shares in order, (instances (lo, hi), number of paths, the worker
        that built them, which the tasks checking them prefer) each; None when a worker found
        the case impossible."""
        return self.planned(self.plan_ahead(run, kind, ci, game, S, actions))

    def plan_ahead(self, run: Run, kind: str, ci: int, game: Game, S, actions: list) -> tuple:
        """`plan`'s tasks submitted, not waited for: what `planned` collects.  Submitted
        before a case's checking tasks (`induction`'s and `transitions`' ``then``), they run
        first: the next case is built while this one is checked, and no worker waits at the
        case's end for a build.  Each is sent to a worker at once (a preferred one, in turn),
        to run before the checks queued there: a task free to go anywhere waits at the
        scheduler until a worker has nothing queued, which is the case's end."""
        from . import splits
        from .workers import plan_task
        workers = sorted(self.client.scheduler_info().get("workers", {}))
        most = PARTS_PER_WORKER * max(1, len(workers))
        jobs = []
        for a in actions:
            n = splits.instance_count(game, S, a)
            m = max(1, min(n, most))
            jobs += [(a, (n * i // m, n * (i + 1) // m)) for i in range(m)]
        futures = {}
        for k, (a, part) in enumerate(jobs):
            where = {"workers": [workers[k % len(workers)]], "allow_other_workers": True,
                     "priority": 1} if workers else {}
            futures[self.client.submit(plan_task, run, kind, ci, a, part, pure=False,
                                       **where)] = (a, part)
        return tuple(actions), jobs, futures

    def planned(self, ahead: tuple) -> dict | None:
        """What `plan_ahead`'s tasks found, as `plan` says it."""
        from distributed import as_completed
        actions, jobs, futures = ahead
        got: dict = {}
        try:
            for f in as_completed(list(futures)):
                try:
                    n, where, took = f.result()
                except KeyboardInterrupt:
                    raise
                except Exception as e:      # noqa: BLE001 - a worker's failure, one line
                    raise RulebookError(f"a proof worker failed: {type(e).__name__}: "
                                        f"{e}") from None
                if n is None:
                    return None
                got[futures[f]] = (n, where)
                self.costs.built(futures[f][0], n, took)
        finally:
            self.client.cancel([f for f in futures if not f.done()])
        out: dict = {a: [] for a in actions}
        for a, part in jobs:
            out[a].append((part, *got[(a, part)]))
        return out

    def _start(self) -> None:
        self._cluster, self.client = workpool.start_local(self.workers)
        from . import workers
        workers.register(self.client)

    def induction(self, run: Run, ci: int, candidates: list, items: list, journal, tally,
                  say, parts=None, learned=(), then=None, wait: bool = True):
        """`induction._check_paths`'s verdicts for the paths ``items`` of case ``ci``
        ((place, action, place among the action's paths) each, `induction.by_action`), one
        tuple a task, checked on the workers; each task's records written into ``journal``
        (the store) as it comes back; ``parts``: the shares the workers built of each
        action (`plan`), whose paths go to their builders first; ``learned``: the
        (action, invariant) pairs found to need splitting so far, for every worker;
        ``then``: called before any task is submitted (the next case's `plan_ahead`: the
        workers build the next case first, so that its checks can start the moment this
        case's last check is done, not after a build the other worker waits through);
        ``wait`` False: the `Sent` tasks, not waited for."""
        from .workers import induction_task
        cands = list(candidates)
        known = sorted(learned)

        def submit(part, **where):
            return self.client.submit(induction_task, run, ci, cands, part,
                                      journal is not None, known, pure=False, **where)

        def take(got):
            result, records = got
            for at, action, why, skipped, took in records:
                journal.record(ci, at, action, cands, why, skipped, seconds=took)
            for action, (n, took) in result[2].items():
                self.costs.checked(action, n, took)
            return result, None
        return self._map(items, submit, take, tally, say, "induction", ci, parts, then, wait)

    def transitions(self, run: Run, ci: int, live: tuple, items: list, done: dict,
                    journal, names: list, tally, say, parts=None, then=None,
                    wait: bool = True):
        """The failures of the transition properties ``live`` on the paths ``items`` of case
        ``ci`` (as for `induction`, ``then`` and ``wait`` too), one dict a task
        (`transitions.Pass.sharer`), checked on the workers; ``done``: what a previous run
        decided, by place; each task's records written into ``journal`` as it comes back."""
        from .workers import transition_task

        def submit(part, **where):
            mine = {it[0]: done[it[0]] for it in part if it[0] in done}
            return self.client.submit(transition_task, run, ci, live, part, mine,
                                      journal is not None, pure=False, **where)

        def take(got):
            failed, records, checked = got
            for at, action, decided in records:
                journal.record_transition(ci, at, action, names, decided)
            return failed, checked
        return self._map(items, submit, take, tally, say, "transitions", ci, parts, then,
                         wait)

    def _map(self, items: list, submit, take, tally, say, what: str, ci: int,
             parts=None, then=None, wait: bool = True):
        """``items`` (paths, each action's together) in chunks, a task each
        (``submit(chunk, workers=..., allow_other_workers=True)``), each result as it comes
        back given to ``take``, which writes its records and returns (the result, the paths
        it checked or None: all of them); Ctrl-C keeps what came back and cancels the rest.
        The chunks go to the workers in runs (the first ones to the first worker, and so
        on), only preferred: a worker builds only the actions it is sent, so each builds
        about its share of the case, not all of it; an idle worker still takes (steals) a
        busy one's tasks, and one that dies has its tasks run elsewhere.  With ``parts``
        (`plan`) each item names its share of the action too, each share's chunks go to the
        worker that built it first instead, and no chunk holds two shares.  The results in
        a list; with ``wait`` False, the `Sent` tasks instead, not waited for."""
        workers = sorted(self.client.scheduler_info().get("workers", {}))
        n = max(1, len(workers))
        size = max(1, min(CHUNK_MAX, math.ceil(len(items) / (n * TASKS_PER_WORKER))))
        homes: dict = {}
        if parts:
            items, homes = _shared(items, parts)
            by: dict = {}
            for it in items:
                by.setdefault((it[1], it[3]), []).append(it)
            chunks = [its[i:i + size] for its in by.values() for i in range(0, len(its), size)]
            # The costliest first on each worker: what is left at the case's end, while the
            # other worker waits, is then short (longest processing time first).
            chunks.sort(key=lambda chunk: -sum(self.costs.of(it[1]) for it in chunk))
        else:
            chunks = [items[i:i + size] for i in range(0, len(items), size)]
        if then is not None:
            then()
        futures = {}
        for c, chunk in enumerate(chunks):
            home = homes.get((chunk[0][1], chunk[0][3])) if homes else None
            where = {"workers": [home if home in workers else workers[c * n // len(chunks)]],
                     "allow_other_workers": True} if workers else {}
            futures[submit(chunk, **where)] = len(chunk)
        say(f"{what}: {len(items)} paths of case {ci + 1} sent to {n} Dask workers in "
            f"{len(futures)} tasks (a worker builds the paths of the actions it is sent)")
        sent = Sent(self.client, futures, take, tally, say, what, ci)
        return sent.wait() if wait else sent


class Sent:
    """A case's tasks sent to the workers (`Engine._map`), their results taken (``take``) as
    they come back, by `wait`: sent before the previous case's results are all back, a
    case's checks keep a worker busy while the other finishes that case's last tasks."""

    def __init__(self, client, futures: dict, take, tally, say, what: str, ci: int):
        self.client, self.futures, self.take = client, futures, take
        self.tally, self.say, self.what, self.ci = tally, say, what, ci
        self.pending = set(futures)
        self.out: list = []
        self.counted = 0        # the paths counted in ``tally`` as checked so far

    def wait(self) -> list:
        """Every task's result, in the order they came back; Ctrl-C keeps what came back
        (`abandon`)."""
        from distributed import as_completed
        try:
            for f in as_completed(list(self.pending)):
                self.pending.discard(f)
                self._collect(f)
        except KeyboardInterrupt:
            self.abandon()
            raise
        finally:
            self._cancel()
        return self.out

    def abandon(self) -> None:
        """What came back already is kept (the finished tasks' verdicts are written); the
        rest is cancelled."""
        for f in [f for f in self.pending if f.done() and f.status == "finished"]:
            self.pending.discard(f)
            self._collect(f)
        self._cancel()

    def _cancel(self) -> None:
        if self.pending:
            self.client.cancel(list(self.pending))
            self.pending.clear()

    def _collect(self, f) -> None:
        try:
            got = f.result()
        except KeyboardInterrupt:
            raise
        except Exception as e:      # noqa: BLE001 - a worker's failure, said in one line
            raise RulebookError(f"a proof worker failed: {type(e).__name__}: {e}") from None
        result, checked = self.take(got)
        self.out.append(result)
        tally = self.tally
        self.counted += self.futures[f] if checked is None else checked
        if tally is not None:
            tally.add(self.futures[f] if checked is None else checked)
        self.say(f"{self.what}: action paths checked", done=tally.done if tally else 0,
                 total=tally.total if tally else None,
                 note=f"{len(self.out)} of {len(self.futures)} tasks of case {self.ci + 1}")


class Costs:
    """What a path of each action takes, as far as the proof has seen: seconds a path to
    check (the workers' timings of the inductive step), else to build (`Engine.planned`'s,
    about a tenth of that; only an order is asked of it)."""

    def __init__(self):
        self._check: dict = {}
        self._build: dict = {}

    def checked(self, action: str, n: int, seconds: float) -> None:
        _add(self._check, action, n, seconds)

    def built(self, action: str, n: int, seconds: float) -> None:
        _add(self._build, action, n, seconds)

    def of(self, action: str) -> float:
        """Seconds a path of ``action`` is expected to take; 0 for one not seen yet."""
        for table in (self._check, self._build):
            n, s = table.get(action, (0, 0.0))
            if n:
                return s / n
        return 0.0


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _add(table: dict, action: str, n: int, seconds: float) -> None:
    c = table.setdefault(action, [0, 0.0])
    c[0] += n
    c[1] += seconds


def _shared(items: list, parts: dict) -> tuple[list, dict]:
    """``items`` ((place, action, place among the action's paths) each) with the share of
    the action each lies in and its place there, (..., (lo, hi) or None, place) each, by the
    ``parts`` of `Engine.plan` (an action not there: None, built whole where sent); and the
    worker that built each (action, share)."""
    out = []
    for at, a, k in items:
        base = 0
        for part, n, _ in parts.get(a, ()):
            if k < base + n:
                out.append((at, a, k, part, k - base))
                break
            base += n
        else:
            out.append((at, a, k, None, None))
    return out, {(a, part): where for a, ps in parts.items() for part, _, where in ps}


def engine(recipe: Recipe, workers: int, address: str | None = None) -> Engine:
    """An engine on the Dask scheduler at ``address`` (`connect`), else one that checks in
    this process first and starts a local cluster of ``workers`` processes once that has
    taken LOCAL_S (`Engine.ahead`)."""
    if address is None:
        workpool.check_local(workers)
    return connect(address, recipe) if address is not None else Engine(recipe, workers)


def connect(address: str, recipe: Recipe) -> Engine:
    """An engine on the Dask scheduler at ``address``; one that does not answer within
    `workpool.CONNECT_S` is a `RulebookError`, before any work."""
    return Engine(recipe, client=workpool.client_at(address), address=address)
