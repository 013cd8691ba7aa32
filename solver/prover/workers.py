"""The Dask workers' side of `cluster`: the tasks a proof sends (a share of the inductive
step's or the transition properties' paths) and `Runs`, the worker plugin that keeps, per run,
the game loaded and the step's cases built for the run's next tasks (the state lives in the
worker, not in a module global).  Imported by the workers and by `cluster` when it starts or
reaches a cluster, never by a proof in one process: Dask takes seconds to import."""
from __future__ import annotations

from distributed import WorkerPlugin, get_worker

from ..lang.errors import RulebookError
from . import abstractions, induction, transitions

PLUGIN = "rulebook-runs"


def register(client) -> None:
    """Give every worker of ``client``'s cluster, and each that joins later, its `Runs`."""
    client.register_plugin(Runs(), name=PLUGIN)


class Runs(WorkerPlugin):
    """A worker's state: the runs it holds (at most `KEEP`, the newest), each its game and
    step built once, for the next tasks of the same run."""

    KEEP = 2

    def __init__(self):
        self.runs: dict = {}

    def setup(self, worker):
        self.runs = {}

    def get(self, run) -> _Worked:
        hit = self.runs.pop(run.key, None)
        if hit is None:
            hit = _Worked(run)
        self.runs[run.key] = hit
        while len(self.runs) > self.KEEP:
            self.runs.pop(next(iter(self.runs)))
        return hit


class _Worked:
    """One run on one worker: the game loaded and the step's abstractions made at once, the
    step's cases when first asked for."""

    def __init__(self, run):
        self.run = run
        self.game = run.recipe.load()
        self.abstraction = abstractions.for_step(run.options)
        self._step = None

    def induction_share(self, ci: int, candidates, items, journaled) -> tuple:
        with self.game.symbolic.abstracted(self.abstraction):
            if self._step is None:
                names = set(self.run.invariants)
                invs = [i for i in self.game.p.invariants if i.name in names]
                self._step = induction.Step(self.game, invs, self.run.options, _quiet)
            return self._step.check_share(ci, candidates, items, journaled)

    def transition_share(self, ci: int, live, items, done, journaled) -> tuple:
        with self.game.symbolic.abstracted(self.abstraction):
            if self._step is None:
                names = set(self.run.invariants)
                trans = [i for i in self.game.p.invariants if i.name in names]
                self._step = transitions.Pass(self.game, trans, set(self.run.assumed),
                                              self.run.options)
            return self._step.remote_share(ci, live, items, done, journaled)


def _quiet(text: str, done=None, total=None, note: str = "") -> None:
    return None


def induction_task(run, ci: int, candidates: list, items: list, journaled: bool) -> tuple:
    """A task: paths ``items`` of case ``ci`` checked on this worker
    (`induction.Step.check_share`)."""
    return _runs().get(run).induction_share(ci, candidates, items, journaled)


def transition_task(run, ci: int, live: tuple, items: list, done: dict,
                    journaled: bool) -> tuple:
    """A task: paths ``items`` of case ``ci`` checked for the transition properties ``live``
    on this worker (`transitions.Pass.remote_share`)."""
    return _runs().get(run).transition_share(ci, live, items, done, journaled)


def _runs() -> Runs:
    plugin = get_worker().plugins.get(PLUGIN)
    if plugin is None:
        raise RulebookError("a Dask worker without the rulebook plugin (a worker of another "
                            "client?)")
    return plugin
