"""The fork pool: a pass's paths shared out among forked processes, each drawing the next
path none has drawn, while the parent builds the next case's paths."""
from __future__ import annotations

from ..lang.errors import RulebookError


def pulled(items: list, jobs: int) -> list:
    """``jobs`` shares of ``items`` for `forked`, each drawing the next item none has drawn
    yet (a counter in shared memory, which the forked children inherit): a worker dealt slow
    paths no longer runs alone while the others wait.  Dealt by turns ([j::2]), an action's
    paths that come slow and fast by turns all went slow to one worker: 80 paths in 3 minutes
    for one, 80 in some 40 minutes for the other."""
    import multiprocessing as mp
    try:
        counter = mp.get_context("fork").Value("q", 0)
    except ValueError:
        return [items]          # `forked` then runs the shares one after the other

    def draw():
        while True:
            with counter.get_lock():
                i = counter.value
                counter.value += 1
            if i >= len(items):
                return
            yield items[i]
    return [draw() for _ in range(jobs)]


def forked(fn, shares: list, say, meanwhile=None) -> list:
    """``fn`` over each share in its own forked child, at once: a Houdini round's paths are
    independent given the candidates, so the round's verdict is the union of the children's.
    Each child has a copy of the parent's z3 terms; what comes back is plain data.  A child
    that dies is an error, never a silent "proved".  ``meanwhile`` (no argument) runs in the
    parent while the children work: the next case's paths are built then, on a core that
    would otherwise wait (a case of a large step took one core two minutes to build)."""
    import multiprocessing as mp
    try:
        ctx = mp.get_context("fork")
    except ValueError:
        out = [fn(share) for share in shares]
        if meanwhile is not None:
            meanwhile()
        return out
    procs = []
    for j, share in enumerate(shares):
        recv, send = ctx.Pipe(duplex=False)

        def child(share=share, send=send, j=j):
            try:
                send.send(("ok", fn(share, say=lambda m, **k: say(
                    f"[{j + 1}/{len(shares)}] {m}", **k))))
            except KeyboardInterrupt:
                send.send(("interrupted", ""))
            except BaseException as e:   # noqa: BLE001 - reported to the parent
                send.send(("error", f"{type(e).__name__}: {e}"))
            finally:
                send.close()
        p = ctx.Process(target=child, daemon=True)
        p.start()
        send.close()
        procs.append((p, recv))
    out = []
    try:
        if meanwhile is not None:
            meanwhile()
        for p, recv in procs:
            try:
                kind, value = recv.recv()
            except EOFError:
                p.join()
                raise RulebookError(f"a proof worker exited with status {p.exitcode}")
            if kind == "interrupted":
                # A Ctrl-C reaches the whole process group: a worker that heard it first
                # (z3 catches it during a check) stops the pass as the parent would.
                raise KeyboardInterrupt
            if kind != "ok":
                raise RulebookError(f"a proof worker failed: {value}")
            out.append(value)
    finally:
        for p, recv in procs:
            if p.is_alive():
                p.kill()
            p.join()
            recv.close()
    return out


def next_case(n: int, ci: int, skip) -> int | None:
    """The first of the ``n`` cases after ``ci`` that ``skip`` does not rule out, or None."""
    return next((cj for cj in range(ci + 1, n) if not skip(cj)), None)

