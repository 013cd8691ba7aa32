"""The checking process: where documents are parsed and checked, apart from the server's
process, so that the server's answers never wait for the interpreter a check holds (a 1 MB
file takes tens of seconds to parse).

The server (`Worker`) sends it one check at a time, the newest text of the document whose
text settled first; it sends back what the server keeps of the analysis
(`Analysis.shipped`: the diagnostics and the indexes of the names) and keeps the whole of it
(the checked program, the parse trees) to answer what needs them: the English of a
declaration, the references and renames that reach the files extending a document, and the
examples of the keywords' hovers.  Those queries are answered on a thread of their own,
beside the check under way.

The process is spawned (a fresh interpreter: nothing of the server's threads), stopped on
shutdown and exit, and ends by itself when the server's end of the pipe closes (a server
killed outright leaves no process behind)."""
from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import os
import pickle
import queue
import sys
import threading
from pathlib import Path

from ..lang.sources import gc_paused
from . import analysis as A
from . import lexical
from .reference import Examples

log = logging.getLogger(__name__)

# Seconds a hover waits for the English of a declaration before it answers without it.
ENGLISH_WAIT = 5.0
# Seconds a request for references or a rename waits for its answer.
QUERY_WAIT = 60.0


class WorkerError(Exception):
    """A query the checking process could not answer (the message says why)."""


class Worker:
    """The checking process, seen from the server.  Everything runs on the server's event
    loop but `_read`, the thread that receives the process's messages.  ``server`` gives a
    document's job (`job`), takes its analysis (`deliver`) and holds the hovers' `examples`."""

    def __init__(self, server) -> None:
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self.proc = None
        self.conn = None
        self.due: dict[str, float] = {}      # uri -> when to check it (loop time)
        self.busy: str | None = None          # the uri being checked
        self.timer: asyncio.TimerHandle | None = None
        self.answers: dict[int, asyncio.Future] = {}
        self.ids = itertools.count()
        self.stopped = False
        self.outbox: queue.Queue | None = None

    # ---- the process -----------------------------------------------------------------

    def start(self) -> bool:
        """Start the process unless it runs (or the server is stopping); whether it runs."""
        if self.proc is not None:
            return True
        if self.stopped:
            return False
        self.loop = asyncio.get_running_loop()
        ctx = multiprocessing.get_context("spawn")
        mine, theirs = ctx.Pipe()
        self.proc = ctx.Process(target=serve, args=(theirs,), name="rulebook-check",
                                daemon=True)
        self.proc.start()
        theirs.close()
        self.conn = mine
        # Sent from a thread: a message waits in the pipe until the process reads it, and a
        # new process reads nothing before it has imported the checker (a second or two).
        self.outbox = queue.Queue()
        threading.Thread(target=self._write, args=(mine, self.outbox), name="rulebook-write",
                         daemon=True).start()
        threading.Thread(target=self._read, args=(mine, self.proc), name="rulebook-read",
                         daemon=True).start()
        _, fut = self._ask("examples")
        fut.add_done_callback(lambda f: f.cancelled() or f.exception() is not None
                              or self.server.examples.provide(f.result()))
        return True

    def stop(self) -> None:
        """Stop the process and wait for it (a second, then it is killed)."""
        self.stopped = True
        if self.timer is not None:
            self.timer.cancel()
        proc, conn = self.proc, self.conn
        self.proc = self.conn = None
        if proc is None:
            return
        self.outbox.put(("stop",))
        proc.join(1.0)
        if proc.is_alive():
            proc.kill()
            proc.join(1.0)
        conn.close()
        self._fail_all("the server is stopping")

    @staticmethod
    def _write(conn, outbox: queue.Queue) -> None:
        """Send the messages of ``outbox`` (on a thread of the server) until "stop"."""
        while True:
            msg = outbox.get()
            try:
                conn.send(msg)
            except (OSError, ValueError):  # the process ended: `_read` sees it too
                return
            if msg[0] == "stop":
                return

    def _read(self, conn, proc) -> None:
        """The messages of ``proc``, handed to the loop (on a thread of the server)."""
        while True:
            try:
                data = conn.recv_bytes()
            except (EOFError, OSError):
                break
            with gc_paused():  # an analysis is 100,000 objects and no garbage
                msg = pickle.loads(data)
            if not self._call(self._received, msg):
                return
        self._call(self._lost, proc)

    def _call(self, fn, *args) -> bool:
        try:
            self.loop.call_soon_threadsafe(fn, *args)
            return True
        except RuntimeError:  # the loop is closed: the server is ending
            return False

    def _lost(self, proc) -> None:
        """The process ended (it crashed or was stopped): the next request starts another."""
        if proc is not self.proc:
            return
        log.error("the checking process ended (exit code %s)", proc.exitcode)
        proc.join(1.0)
        self.outbox.put(("stop",))
        self.proc = self.conn = None
        self.busy = None
        self._fail_all("the checking process ended")

    def _fail_all(self, why: str) -> None:
        answers, self.answers = self.answers, {}
        for fut in answers.values():
            try:
                if not fut.done():
                    fut.set_exception(WorkerError(why))
            except RuntimeError:  # its loop is closed: nobody waits for it
                pass

    def _send(self, msg) -> bool:
        """Send ``msg`` to the process (without waiting); whether it runs."""
        if self.proc is None:
            return False
        self.outbox.put(msg)
        return True

    def _received(self, msg) -> None:
        if msg[0] == "checked":
            _, uri, version, an = msg
            self.busy = None
            if an is not None:
                self.server.deliver(uri, version, an)
            self._schedule()
        elif msg[0] == "answer":
            _, qid, ok, value = msg
            fut = self.answers.pop(qid, None)
            if fut is not None and not fut.done():
                if ok:
                    fut.set_result(value)
                else:
                    fut.set_exception(WorkerError(value))

    # ---- checks ----------------------------------------------------------------------

    def request(self, uri: str, delay: float) -> None:
        """Check ``uri`` in ``delay`` seconds (a newer request for it replaces this one)."""
        if not self.start():
            return
        self.due[uri] = self.loop.time() + delay
        self._schedule()

    def close(self, uri: str) -> None:
        self.due.pop(uri, None)
        if self.proc is not None:
            self._send(("close", uri))

    def _schedule(self) -> None:
        """Send the next check once the process is free and its time has come."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        while self.busy is None and self.due and self.proc is not None:
            uri, at = min(self.due.items(), key=lambda kv: kv[1])
            wait = at - self.loop.time()
            if wait > 0:
                self.timer = self.loop.call_later(wait, self._schedule)
                return
            del self.due[uri]
            job = self.server.job(uri)
            if job is not None and self._send(("check", uri, *job)):
                self.busy = uri

    # ---- queries ---------------------------------------------------------------------

    def _ask(self, kind: str, *args) -> tuple[int, asyncio.Future]:
        fut = self.loop.create_future()
        qid = next(self.ids)
        self.answers[qid] = fut
        if not self._send(("query", qid, kind, args)):
            self.answers.pop(qid)
            fut.set_exception(WorkerError("the checking process is not running"))
        return qid, fut

    async def ask(self, kind: str, *args, timeout: float = QUERY_WAIT):
        """The answer of the process to a query (`Service.q_<kind>`); `WorkerError` when it
        cannot answer, `TimeoutError` when it takes longer than ``timeout``."""
        if not self.start():
            raise WorkerError("the server is stopping")
        qid, fut = self._ask(kind, *args)
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self.answers.pop(qid, None)

    async def english(self, uri: str, decl) -> list[str]:
        """The English of a declaration, or nothing when the process cannot say it soon."""
        try:
            return await self.ask("english", uri, decl, timeout=ENGLISH_WAIT)
        except (WorkerError, TimeoutError):
            return []


# ---- the process's side --------------------------------------------------------------------

def serve(conn) -> None:
    """The checking process: checks and queries from ``conn`` until it says stop or closes."""
    # Its standard output is the server's, the client's channel: nothing may be written to
    # it, nor may it stay open after the server ends.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    Service(conn).run()


class Service:
    """What the checking process keeps: the parses (`Project`) and every open document's
    latest analysis, whole.  Its main thread reads the pipe; one thread checks, one answers
    queries, one finds the keywords' examples once."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.project = A.Project()
        self.kept: dict[str, A.Analysis] = {}
        self.examples = Examples()
        self.checks: queue.Queue = queue.Queue()
        self.queries: queue.Queue = queue.Queue()

    def run(self) -> None:
        for q, fn in ((self.checks, self.check), (self.queries, self.answer)):
            threading.Thread(target=self.drain, args=(q, fn), daemon=True).start()
        while True:
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                break
            if msg[0] == "stop":
                break
            if msg[0] == "close":
                self.kept.pop(msg[1], None)
            elif msg[0] == "query" and msg[2] == "examples":
                # Seconds of parsing every spec: on a thread of its own, so that neither the
                # first check nor a hover's English waits for it.
                threading.Thread(target=self.answer, args=msg[1:], daemon=True).start()
            else:
                (self.checks if msg[0] == "check" else self.queries).put(msg[1:])
        # At once, a check under way included: nothing it would send is wanted any more.
        os._exit(0)

    def send(self, msg) -> None:
        with self.lock:
            try:
                self.conn.send(msg)
            except (OSError, ValueError):
                os._exit(0)   # the server is gone

    @staticmethod
    def drain(q: queue.Queue, fn) -> None:
        while True:
            fn(*q.get())

    def check(self, uri: str, version, path: Path | None, name: str, text: str,
              buffers: dict[Path, str]) -> None:
        try:
            an = self.project.analyse(path, name, text, buffers)
        except Exception:  # noqa: BLE001 - a failed check must not stop the process
            log.exception("checking %s failed", uri)
            self.send(("checked", uri, version, None))
            return
        if an.index is not None or uri not in self.kept:
            self.kept[uri] = an
        self.send(("checked", uri, version, an.shipped()))

    def answer(self, qid: int, kind: str, args: tuple) -> None:
        try:
            ok, value = True, getattr(self, "q_" + kind)(*args)
        except A.Refused as e:
            ok, value = False, str(e)
        except Exception as e:  # noqa: BLE001 - an error answer, not a dead process
            log.exception("query %s failed", kind)
            ok, value = False, f"internal error: {type(e).__name__}: {e}"
        self.send(("answer", qid, ok, value))

    # ---- the queries ---------------------------------------------------------------------

    def analysis(self, uri: str) -> A.Analysis:
        an = self.kept.get(uri)
        if an is None or an.index is None:
            raise A.Refused("the document is not checked yet")
        return an

    def q_examples(self):
        return self.examples.examples(wait=True)

    def q_english(self, uri: str, decl) -> list[str]:
        an = self.kept.get(uri)
        return A.english(an, decl) if an is not None else []

    def q_references(self, uri: str, line: int, col: int, include_declaration: bool,
                     buffers: dict[Path, str], encoding: str) -> list[tuple[str, tuple]]:
        """Where the name at a position is written: (uri, range in ``encoding`` units)."""
        an = self.analysis(uri)
        family = self.project.family(an, buffers)
        texts = _Texts(family)
        return [(A.uri_of(an, f), texts.units(f, r, encoding))
                for f, r in A.references(an, family, line, col, include_declaration)]

    def q_rename(self, uri: str, line: int, col: int, new: str, buffers: dict[Path, str],
                 encoding: str) -> dict[str, list[tuple]]:
        """The ranges to rewrite by uri, in ``encoding`` units."""
        an = self.analysis(uri)
        family = self.project.family(an, buffers)
        texts = _Texts(family)
        return {A.uri_of(an, f): [texts.units(f, r, encoding) for r in rs]
                for f, rs in A.rename(an, family, line, col, new).items()}


class _Texts:
    """The texts of indexed files, for converting their ranges to a position encoding."""

    def __init__(self, indexes) -> None:
        self.indexes = indexes
        self.texts: dict[str, lexical.Text] = {}

    def units(self, name: str, r, encoding: str):
        idx = self.indexes.get(name)
        if idx is None:
            return r
        t = self.texts.get(name)
        if t is None:
            t = self.texts[name] = lexical.Text(idx.text)
        return t.range_to_units(r, encoding)
