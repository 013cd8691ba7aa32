"""The Dask workers' side of `workpool`: `Held`, the worker plugin that keeps what a worker
built for one task (a game loaded, the players of a playout) for the next tasks that ask for
the same thing, so the state lives in the worker, not in a module global.  Imported by the
workers and by `workpool` when it starts or reaches a cluster, never by work in one process:
Dask takes seconds to import."""
from __future__ import annotations

from distributed import WorkerPlugin, get_worker

from ..lang.errors import RulebookError

PLUGIN = "rulebook-held"


def register(client) -> None:
    """Give every worker of ``client``'s cluster, and each that joins later, its `Held`."""
    client.register_plugin(Held(), name=PLUGIN)


class Held(WorkerPlugin):
    """What a worker keeps between tasks: at most `KEEP` things, the newest, by key."""

    KEEP = 4

    def __init__(self):
        self.things: dict = {}

    def setup(self, worker):
        self.things = {}

    def get(self, key, make):
        """The thing kept under ``key`` (hashable), made by ``make()`` when not yet kept."""
        hit = self.things.pop(key, None)
        if hit is None:
            hit = make()
        self.things[key] = hit
        while len(self.things) > self.KEEP:
            self.things.pop(next(iter(self.things)))
        return hit


def held(key, make):
    """`Held.get` of this worker (called by a task)."""
    plugin = get_worker().plugins.get(PLUGIN)
    if plugin is None:
        raise RulebookError("a Dask worker without the rulebook plugin (a worker of another "
                            "client?)")
    return plugin.get(key, make)
