"""The explorer in a browser (`rulebook serve`): play a game, see every refused move and its
rule, compare two readings on one state, step through a puzzle's answer (Starlette, uvicorn)."""
