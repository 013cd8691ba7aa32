"""The explorer's web application (Starlette): its routes, each request's input checked, and
every error answered in one line — a page or ``{"error": ...}`` with a 4xx status (404 for an
unknown game, 422 for a move the rules refuse, 400 for other bad input), never a traceback.

Pages: ``/`` (the games), ``/games/GAME`` (play; options in the query string), ``/compare``
(two readings on one state, or a stored witness), ``/puzzles``.  The game page's script posts
JSON to ``/api/view``, ``/api/apply``, ``/api/random`` and ``/api/load``: the game options, the
start state (null: the initial one) and the moves played, which every request replays — the
server keeps no session."""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..lang.errors import Disagreement, EvalError, InputError, RulebookError
from . import explore as X
from . import pages as P

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 8 * 1024 * 1024
PUZZLE_TIMEOUT_MS = 30_000
LOG = logging.getLogger("rulebook.web")


def status_of(e: RulebookError) -> int:
    if isinstance(e, X.UnknownGame):
        return 404
    if isinstance(e, (X.IllegalMove, EvalError)):
        return 422
    if isinstance(e, Disagreement):
        return 500
    return 400


def error_json(e: RulebookError) -> JSONResponse:
    body = {"error": e.headline()}
    if isinstance(e, X.IllegalMove):
        body.update(rule=e.rule, why=e.why)
    return JSONResponse(body, status_code=status_of(e))


def _internal(e: Exception) -> str:
    LOG.exception("internal error")
    return f"internal error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


class Explorer:
    """The routes, sharing one lock: the engine's games keep caches, so one request computes
    at a time (a local tool for one person; the pages stay responsive meanwhile)."""

    def __init__(self):
        self.lock = threading.Lock()

    async def run(self, fn, *args):
        def locked():
            with self.lock:
                return fn(*args)
        return await run_in_threadpool(locked)

    async def html(self, fn, *args) -> HTMLResponse:
        try:
            return HTMLResponse(await self.run(fn, *args))
        except RulebookError as e:
            return HTMLResponse(P.error_page(status_of(e), e.headline()), status_code=status_of(e))
        except Exception as e:          # a bug: one line to the page, the traceback to the log
            return HTMLResponse(P.error_page(500, _internal(e)), status_code=500)

    async def api(self, request: Request, fn) -> JSONResponse:
        try:
            body = await read_body(request)
            return JSONResponse(await self.run(fn, body))
        except RulebookError as e:
            return error_json(e)
        except Exception as e:
            return JSONResponse({"error": _internal(e)}, status_code=500)

    # ---- pages ----------------------------------------------------------------------------

    async def index(self, request: Request):
        return await self.html(index_html)

    async def game(self, request: Request):
        return await self.html(game_html, request.path_params["game"],
                               request.query_params.multi_items())

    async def compare(self, request: Request):
        return await self.html(compare_html, request.query_params.multi_items())

    async def puzzles(self, request: Request):
        if request.method == "POST":
            raw = await request.body()
            if len(raw) > MAX_BODY:
                return HTMLResponse(P.error_page(413, "the puzzle is too large"), status_code=413)
            form = dict(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))
            text, file = form.get("text", ""), None
            backend = form.get("backend", "search")
        else:
            q = dict(request.query_params)
            file, text, backend = q.get("file"), "", q.get("backend", "search")
        try:
            return HTMLResponse(await self.run(puzzles_html, file, text, backend))
        except RulebookError as e:
            msg = f"<p class=\"error\" id=\"error\">{P.esc(e.headline())}</p>"
            page = P.puzzles_page(X.puzzle_files(), text, backend, None, file)
            return HTMLResponse(page.replace("<main>", "<main>" + msg, 1),
                                status_code=status_of(e))
        except Exception as e:
            return HTMLResponse(P.error_page(500, _internal(e)), status_code=500)

    # ---- the game page's requests -----------------------------------------------------------

    async def api_view(self, request: Request):
        return await self.api(request, api_view)

    async def api_apply(self, request: Request):
        return await self.api(request, api_apply)

    async def api_random(self, request: Request):
        return await self.api(request, api_random)

    async def api_load(self, request: Request):
        return await self.api(request, api_load)


async def read_body(request: Request) -> dict:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise InputError(f"request body: larger than {MAX_BODY // (1024 * 1024)} MB")
    text = raw.decode("utf-8", "replace")
    obj = X.parse_json(text, "request body")
    if not isinstance(obj, dict):
        raise InputError("request body: expected a JSON object")
    return obj


def create_app() -> Starlette:
    ex = Explorer()
    routes = [
        Route("/", ex.index),
        Route("/games", lambda request: RedirectResponse("/")),
        Route("/games/{game}", ex.game),
        Route("/compare", ex.compare),
        Route("/puzzles", ex.puzzles, methods=["GET", "POST"]),
        Route("/api/view", ex.api_view, methods=["POST"]),
        Route("/api/apply", ex.api_apply, methods=["POST"]),
        Route("/api/random", ex.api_random, methods=["POST"]),
        Route("/api/load", ex.api_load, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    ]
    return Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed})


async def not_found(request: Request, exc) -> HTMLResponse:
    return HTMLResponse(P.error_page(404, f"no page at {request.url.path} (the games are at /)"),
                        status_code=404)


async def not_allowed(request: Request, exc) -> HTMLResponse:
    return HTMLResponse(P.error_page(405, f"{request.method} {request.url.path}: not allowed "
                                     "here"), status_code=405)


def serve(host: str = "127.0.0.1", port: int = 8000) -> None:
    import uvicorn
    print(f"rulebook explorer on http://{host}:{port}/ (Ctrl-C to stop)", flush=True)
    uvicorn.run(create_app(), host=host, port=port, log_level="warning")


# ---- the work of each route (in a worker thread) -------------------------------------------

def index_html() -> str:
    games = X.catalogue()
    return P.index_page(games, {gm["game"]: X.stored_witnesses(gm["game"]) for gm in games})


def game_html(name: str, items) -> str:
    X.check_game_name(name)
    opts, start = X.options_from_query(name, items)
    g = opts.load()
    seed = start.get("seed", 0)
    moves = []
    if start.get("move"):
        line, _ = X.random_line(g, g.initial(), X.rng_at(seed, 0), start["move"])
        moves = [m.to_json(g) for m in line]
    data = payload(opts, g, None, moves, len(moves), "")
    init = {k: data[k] for k in ("options", "start", "moves", "cursor", "state")}
    init["seed"] = seed
    return P.game_page(g, opts, X.expansions_of(name), seed, start.get("move"), data["html"],
                       init)


def payload(opts: X.Options, g, start_obj, moves_json, cursor, flt: str) -> dict:
    """The answer to every request of the game page: the position after ``cursor`` of the
    moves (all replayed, so the redo tail is checked too) and the page's fragments."""
    start = X.read_state(g, start_obj, "start")
    states, moves = X.replay(g, start, moves_json)
    if cursor is None:
        cursor = len(moves)
    if not isinstance(cursor, int) or isinstance(cursor, bool) or not 0 <= cursor <= len(moves):
        raise InputError(f"cursor: expected a whole number from 0 to {len(moves)}")
    if not isinstance(flt, str):
        raise InputError("filter: expected a string")
    v = X.view(g, states[cursor], flt)
    mj = [m.to_json(g) for m in moves]
    frags = P.fragments(g, states, moves, cursor, v, mj[cursor - 1] if cursor else None)
    return {"options": opts.as_json(), "start": start_obj, "moves": mj, "cursor": cursor,
            "state": X.state_json(g, states[cursor]), "actor": v["actor"],
            "terminal": v["terminal"], "scores": v["scores"],
            "legal": [mv["move"] for mv in v["legal"]],
            "refused": [{"action": gr["action"], "rule": gr["rule"], "why": gr["why"],
                         "count": gr["count"]} for gr in v["refused"]],
            "html": frags}


def _request(body: dict):
    opts = X.options_from_json(body)
    return opts, opts.load()


def api_view(body: dict) -> dict:
    opts, g = _request(body)
    return payload(opts, g, body.get("start"), body.get("moves", []), body.get("cursor"),
                   body.get("filter", ""))


def _played(g, body: dict):
    """The start, the moves up to the cursor (the redo tail is dropped by a new move), and
    the state there."""
    start = X.read_state(g, body.get("start"), "start")
    moves = body.get("moves", [])
    states, read = X.replay(g, start, moves)
    cursor = body.get("cursor", len(read))
    if not isinstance(cursor, int) or isinstance(cursor, bool) or not 0 <= cursor <= len(read):
        raise InputError(f"cursor: expected a whole number from 0 to {len(read)}")
    return [m.to_json(g) for m in read[:cursor]], states[cursor]


def api_apply(body: dict) -> dict:
    opts, g = _request(body)
    done, st = _played(g, body)
    if "move_text" in body:
        j = X.parse_json(body["move_text"], "move")
    elif "move" in body:
        j = body["move"]
    else:
        raise InputError("move: missing (a JSON list [action, arguments...])")
    m = X.read_move(g, j, "move")
    X.apply_move(g, st, m, "move")
    moves = done + [m.to_json(g)]
    return payload(opts, g, body.get("start"), moves, len(moves), body.get("filter", ""))


def api_random(body: dict) -> dict:
    opts, g = _request(body)
    done, st = _played(g, body)
    seed = body.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError("seed: expected a whole number (0 or more)")
    count = body.get("count", 1)
    if count == "end":
        count = None
    elif not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise InputError('count: expected a number of moves (1 or more) or "end"')
    if g.is_terminal(st):
        raise X.IllegalMove("the game is over: no move to play")
    line, _ = X.random_line(g, st, X.rng_at(seed, len(done)), count)
    moves = done + [m.to_json(g) for m in line]
    return payload(opts, g, body.get("start"), moves, len(moves), body.get("filter", ""))


def api_load(body: dict) -> dict:
    """Pasted text: a state of the page's game, a history copied from a game page, or a
    puzzle (its start); the answer is the page to go to."""
    from ..lang.jsonpos import locate
    from ..queries.puzzles import prepare
    from ..queries.puzzleprep import query_start
    opts, g = _request(body)
    text = body.get("text")
    where = "pasted"
    obj = X.parse_json(text, where)
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object: a state, a puzzle or a history")

    def located(fn):
        try:
            return fn()
        except X.IllegalMove as e:
            raise X.IllegalMove(locate(e, where, text).headline(), e.rule, e.why) from None
        except InputError as e:
            raise locate(e, where, text) from None

    if all(k in g.field_index for k in obj):
        located(lambda: X.read_state(g, obj, where))
        return {"kind": "state", "url": P.game_url(opts, obj)}
    if "moves" in obj:
        def history():
            o = X.options_from_json(obj, f"{where}.")
            h = o.load()
            st = X.read_state(h, obj.get("start"), f"{where}.start")
            X.replay(h, st, obj["moves"], f"{where}.moves")
            return o
        o = located(history)
        return {"kind": "history", "url": P.game_url(o, obj.get("start"), obj["moves"])}
    if "game" in obj:
        prep = located(lambda: prepare(obj, where))
        st, _ = query_start(prep, prep.puzzle.queries[0])
        return {"kind": "puzzle",
                "url": P.game_url(X.puzzle_options(prep, obj), X.state_json(prep.game, st))}
    located(lambda: X.read_state(g, obj, where))     # names the first field that is not one
    raise InputError(f"{where}: not a state, a puzzle or a history")


def compare_html(items) -> str:
    q: dict = {}
    rest = []
    for k, v in items:
        if k in ("game", "pair", "witness", "reading", "a", "b", "state"):
            q[k] = v
        else:
            rest.append((k, v))
    if "game" not in q:
        raise InputError("game: missing (e.g. /compare?game=torres)")
    witness = None
    if "witness" in q:
        parts = q["witness"].split(":")
        if len(parts) != 3:
            raise InputError(f"witness={q['witness']}: expected READING:A:B")
        witness = X.stored_witness(q["game"], *parts)
        opts = witness["options"]
        reading, a, b = witness["reading"], witness["a"], witness["b"]
        state_obj = witness["state"]
    else:
        opts, extra = X.options_from_query(q["game"], rest)
        if extra:
            raise InputError(f"unknown option {next(iter(extra))!r} for /compare")
        g = opts.load()
        if "pair" in q:
            parts = q["pair"].split(":")
            if len(parts) != 3:
                raise InputError(f"pair={q['pair']}: expected READING:A:B")
            reading, a, b = parts
        elif "reading" in q:
            decl = next((r for r in g.p.readings if r.name == q["reading"]), None)
            names = [o for o, _ in decl.options] if decl else ["", ""]
            reading, a, b = q["reading"], q.get("a", names[0]), q.get("b", names[1])
        else:
            decl = next((r for r in g.p.readings if len(r.options) > 1), None)
            if decl is None:
                raise InputError(f"{g.name} has no reading to compare")
            reading, a, b = decl.name, decl.options[0][0], decl.options[1][0]
        X.reading_pair(g, reading, a, b)
        state_obj = X.parse_json(q["state"], "state") if q.get("state") else None
    ga, gb, st, rows, same = X.compare(opts, reading, a, b, state_obj)
    sc = (X.scores(ga, st, True), X.scores(gb, st, True))
    return P.compare_page(ga, opts, reading, a, b, st, rows, same, witness,
                          X.state_json(ga, st), sc)


def puzzles_html(file: str | None, text: str, backend: str) -> str:
    results = None
    if file:
        text = X.puzzle_text(file)
        results = X.solve_text(text, file, backend, PUZZLE_TIMEOUT_MS)
    elif text.strip():
        results = X.solve_text(text, "puzzle", backend, PUZZLE_TIMEOUT_MS)
    return P.puzzles_page(X.puzzle_files(), text, backend, results, file)


__all__ = ["create_app", "serve"]
