"""The explorer in a browser (`rulebook serve`): play a game, see every refused move and its
rule, compare two readings on one state, step through a puzzle's answer (Starlette, uvicorn).

`explore` asks the game (no HTTP), `pages` writes the HTML, `app` holds the routes; the style
and the script are in ``static/``."""
from __future__ import annotations


def create_app():
    """The ASGI application."""
    from .app import create_app as make
    return make()


def serve(host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run the explorer with uvicorn until interrupted."""
    from .app import serve as run
    run(host, port)
