"""The explorer over HTTP (starlette's TestClient, no browser): every route, with good input and
bad — an unknown game, bad JSON, a move the rules refuse posted by hand — answered by a clear
4xx and one line, never a traceback or a 500.  What the pages show is checked against the
interpreter itself (`Game.moves`, `rulebook play`, `rulebook solve`)."""
from __future__ import annotations

import json
import random
import re
import warnings
from html import unescape
from urllib.parse import quote, unquote

import pytest

from conftest import ROOT, run_cli
from solver.engine.game import load_game
from solver.queries.puzzles import solve

GAME = "les-5-tours"


@pytest.fixture(scope="module")
def client():
    """A client of the explorer's application, in this process; an exception the application
    lets through fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # starlette's note on httpx vs httpx2
        from starlette.testclient import TestClient
    from solver.web import create_app
    with TestClient(create_app(), raise_server_exceptions=True) as c:
        yield c


BODY = {"game": GAME, "variants": [], "params": {}, "start": None, "moves": []}


def _init(html: str) -> dict:
    """The position a game page starts from (its embedded JSON)."""
    m = re.search(r'<script type="application/json" id="init">(.*?)</script>', html, re.S)
    assert m, "no init JSON in the page"
    return json.loads(m.group(1))


def _error(r) -> str:
    """The one-line error of a page or a JSON answer."""
    if r.headers["content-type"].startswith("application/json"):
        return r.json()["error"]
    m = re.search(r'<p class="error" id="error">(.*?)</p>', r.text, re.S)
    assert m, f"no error line in the page:\n{r.text[:500]}"
    return unescape(m.group(1))


def _no_traceback(r):
    assert "Traceback" not in r.text and 'File "' not in r.text


def _data_moves(html: str, cls: str) -> list:
    return [json.loads(unescape(j)) for j in
            re.findall(rf'<button type="button" class="move {cls}[^"]*" data-move="([^"]*)"', html)]


def _seeded(game, seed: int, n: int) -> list:
    """The first ``n`` moves `rulebook play --seed` plays (chance first, weighted)."""
    rng = random.Random(seed)
    st = game.initial()
    chance = [a for a in game.actions if a.chance]
    player = [a for a in game.actions if not a.chance]
    out = []
    while len(out) < n and not game.is_terminal(st):
        m, st = game.pick(st, rng, chance, True) or game.pick(st, rng, player, False)
        out.append(m.to_json(game))
    return out


# ---- pages --------------------------------------------------------------------------------

def test_index_lists_every_game_with_its_readings_and_witnesses(client):
    r = client.get("/")
    assert r.status_code == 200
    for name in ("les-5-tours", "clock-towers", "towers", "torres"):
        g = load_game(name)
        assert f'href="/games/{name}"' in r.text
        assert g.p.title in r.text
        for rd in g.p.readings:
            assert f"<code>{rd.name}</code>" in r.text
    # expansions are offered on their base game's row
    assert 'href="/games/les-5-tours?variant=tours-de-pouvoir"' in r.text
    assert "/compare?game=torres&amp;witness=gate%3Afree%3Aaround" in r.text


def test_game_page_lists_every_move_of_the_interpreter(client):
    r = client.get(f"/games/{GAME}")
    assert r.status_code == 200
    g = load_game(GAME)
    st = g.initial()
    moves = g.moves(st)
    legal = [m.to_json(g) for m, _, _, ref in moves if ref is None]
    assert _data_moves(r.text, "legal") == legal
    rules = {ref.rule for _, _, _, ref in moves if ref is not None}
    shown = set(re.findall(r'<details class="refused-group" data-rule="([^"]+)"', r.text))
    assert shown == rules
    assert f'id="refused-count">{len(moves) - len(legal)}<' in r.text
    init = _init(r.text)
    assert init["moves"] == [] and init["cursor"] == 0 and init["start"] is None
    assert "<svg" in r.text


def test_game_page_starts_at_move_n_of_the_seeded_game_as_rulebook_play(client):
    r = client.get(f"/games/{GAME}?seed=3&move=15")
    assert r.status_code == 200
    init = _init(r.text)
    assert init["cursor"] == 15 and init["seed"] == 3
    trace = run_cli("play", GAME, "--seed", "3", "--trace")
    assert trace.returncode == 0, trace.stderr
    cli_moves = [json.loads(line.split(None, 1)[1]) for line in trace.stdout.splitlines()
                 if re.match(r"\s*\d+\s+\[", line)]
    assert init["moves"] == cli_moves[:15]
    assert "move 15 of 15" in r.text


def test_game_options_in_the_query_string(client):
    r = client.get(f"/games/{GAME}?variant=tours-de-pouvoir&variant=zero_bid:pass&players=3")
    assert r.status_code == 200
    init = _init(r.text)
    assert init["options"] == {"game": GAME, "variants": ["tours-de-pouvoir", "zero_bid:pass"],
                               "params": {"players": 3}}
    assert '<option value="zero_bid:pass" title=' in r.text and "selected>pass<" in r.text
    g = load_game(GAME, ("tours-de-pouvoir", "zero_bid:pass"), (("players", 3),))
    assert len(init["state"]) == len(g.p.state)


@pytest.mark.parametrize("url, status, words", [
    ("/games/nope", 404, "no game named 'nope'"),
    ("/games/..%2Fspec%2Fles-5-tours", 404, "no page at"),
    ("/games/les-5-tours.rules", 404, "no game named 'les-5-tours.rules'"),
    (f"/games/{GAME}?variant=zero_bid:bogus", 400, "reading 'zero_bid' has no option 'bogus'"),
    (f"/games/{GAME}?variant=nope", 400, "no expansion of les-5-tours"),
    (f"/games/{GAME}?players=9", 400, "params.players: 9 is outside 2..5"),
    (f"/games/{GAME}?param.zz=1", 400, "les-5-tours has no parameter 'zz'"),
    (f"/games/{GAME}?param=players", 400, "param=players: expected NAME=N"),
    (f"/games/{GAME}?players=two", 400, "params.players: expected a whole number"),
    (f"/games/{GAME}?seed=x", 400, "seed=x: expected a whole number"),
    (f"/games/{GAME}?colour=red", 400, "unknown option 'colour'"),
])
def test_bad_game_options_are_one_line(client, url, status, words):
    r = client.get(url)
    assert r.status_code == status, r.text[:300]
    assert words in _error(r)
    _no_traceback(r)


def test_static_files_are_served(client):
    for name, kind in (("explorer.js", "javascript"), ("explorer.css", "css"),
                       ("favicon.svg", "svg")):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200 and kind in r.headers["content-type"]
    assert "/api/apply" in client.get("/static/explorer.js").text
    assert client.get("/static/nothing.js").status_code == 404


# ---- the game page's requests ---------------------------------------------------------------

def test_view_replays_the_moves_to_the_cursor(client):
    g = load_game(GAME)
    line = _seeded(g, 5, 12)
    r = client.post("/api/view", json={**BODY, "moves": line, "cursor": 7})
    assert r.status_code == 200, r.text
    d = r.json()
    st = g.initial()
    from solver.web.explore import read_move, state_json
    for j in line[:7]:
        st, _ = g.apply(st, read_move(g, j))
    assert d["state"] == state_json(g, st)
    assert d["cursor"] == 7 and d["moves"] == line       # the redo tail is kept
    assert d["legal"] == [m.to_json(g) for m, _, _ in g.legal(st)]
    assert d["actor"] == g.actor(st)
    assert "move 7 of 12" in d["html"]["status"]
    assert d["html"]["history"].count('class="undone"') == 5


def test_view_filter_narrows_the_refused_moves(client):
    g = load_game(GAME)
    refused = [m.to_json(g) for m, _, _, ref in g.moves(g.initial()) if ref is not None]
    last = next(m for m in refused if len(m) > 1)
    flt = json.dumps(last)                       # spaces in the filter are ignored
    r = client.post("/api/view", json={**BODY, "filter": flt})
    assert r.status_code == 200
    shown = _data_moves(r.json()["html"]["refused"], "refused")
    compact = flt.replace(" ", "")
    assert last in shown
    assert shown == [m for m in refused if compact in json.dumps(m, separators=(",", ":"))]
    assert len(shown) < len(refused)


def test_apply_plays_a_legal_move(client):
    g = load_game(GAME)
    first = g.legal(g.initial())[0][0].to_json(g)
    r = client.post("/api/apply", json={**BODY, "move": first})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["moves"] == [first] and d["cursor"] == 1
    # a new move after an undo drops the moves undone
    two = _seeded(g, 1, 2)
    r = client.post("/api/apply", json={**BODY, "moves": two, "cursor": 1,
                                        "move_text": json.dumps(two[1])})
    assert r.status_code == 200 and r.json()["moves"] == two


def test_an_illegal_move_posted_by_hand_is_refused_with_its_rule(client):
    g = load_game(GAME)
    st = g.initial()
    m, _, _, ref = next(x for x in g.moves(st) if x[3] is not None)
    r = client.post("/api/apply", json={**BODY, "move": m.to_json(g)})
    assert r.status_code == 422
    d = r.json()
    assert d["rule"] == ref.rule and d["why"] == ref.message
    assert d["error"] == f"move: {m.label(g)} is refused by rule {ref.rule}: {ref.message}"


@pytest.mark.parametrize("extra, status, words", [
    ({"move": ["fly", 1]}, 400, "move: unknown action 'fly'"),
    ({"move": "build"}, 400, "move: a move is a JSON list"),
    ({"move": ["bid"]}, 400, "move: bid takes 1 argument(s), found 0"),
    ({"move": ["bid", "lots"]}, 400, "move[1]:"),
    ({"move_text": '["bid", '}, 400, "move:1:9: invalid JSON"),
    ({"move": ["bid", 1], "cursor": 3}, 400, "cursor: expected a whole number from 0 to 0"),
    ({"move": ["bid", 1], "moves": [["bid", 99]]}, 400, "moves[0][1]:"),
    ({"move": ["bid", 1], "start": {"nope": 1}}, 400, "start.nope: not a state field"),
    ({}, 400, "move: missing"),
])
def test_bad_moves_are_one_line(client, extra, status, words):
    r = client.post("/api/apply", json={**BODY, **extra})
    assert r.status_code == status, r.text
    assert words in r.json()["error"]


def test_an_illegal_move_in_the_history_names_its_place(client):
    g = load_game(GAME)
    line = _seeded(g, 2, 4)
    bad = line[:2] + [line[1]] + line[3:]          # the same draw twice: no longer possible
    r = client.post("/api/view", json={**BODY, "moves": bad})
    assert r.status_code in (400, 422)
    assert r.json()["error"].startswith("moves[2]: ")


@pytest.mark.parametrize("raw, status, words", [
    ("{not json", 400, "request body:1:2: invalid JSON"),
    ("[1, 2]", 400, "request body: expected a JSON object"),
    (json.dumps({**BODY, "game": "nope"}), 404, "no game named 'nope'"),
    (json.dumps({**BODY, "game": 3}), 400, "game: missing or not a string"),
    (json.dumps({**BODY, "variants": "zero_bid:pass"}), 400, "variants: expected a list"),
    (json.dumps({**BODY, "params": {"players": 1}}), 400, "params.players: 1 is outside 2..5"),
])
def test_bad_request_bodies_are_one_line(client, raw, status, words):
    for route in ("/api/view", "/api/apply", "/api/random", "/api/load"):
        r = client.post(route, content=raw, headers={"content-type": "application/json"})
        assert r.status_code == status, (route, r.text)
        assert words in r.json()["error"], route


def test_random_moves_are_seeded_and_play_to_the_end(client):
    g = load_game(GAME)
    one = client.post("/api/random", json={**BODY, "seed": 4, "count": 3}).json()
    assert one["moves"] == _seeded(g, 4, 3)          # from the start: rulebook play's game
    again = client.post("/api/random", json={**BODY, "seed": 4, "count": 3}).json()
    assert again["moves"] == one["moves"]
    end = client.post("/api/random", json={**BODY, "seed": 4, "count": "end"}).json()
    assert end["terminal"] and end["moves"][:3] == one["moves"]
    assert end["scores"]["winners"] and len(end["scores"]["score"]) == 2
    assert "game over" in end["html"]["status"]
    r = client.post("/api/random", json={**BODY, "moves": end["moves"], "seed": 4})
    assert r.status_code == 422 and "the game is over" in r.json()["error"]
    r = client.post("/api/random", json={**BODY, "seed": -1})
    assert r.status_code == 400 and "seed:" in r.json()["error"]
    r = client.post("/api/random", json={**BODY, "count": 0})
    assert r.status_code == 400 and "count:" in r.json()["error"]


def test_load_a_state_a_history_and_a_puzzle(client):
    g = load_game(GAME)
    st = {"hand": [["sand", 4]], "phase": "building"}
    r = client.post("/api/load", json={**BODY, "text": json.dumps(st)})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["kind"] == "state"
    assert json.loads(unquote(d["url"].split("#", 1)[1]))["start"] == st
    hist = {"game": GAME, "variants": ["zero_bid:pass"], "params": {}, "start": None,
            "moves": _seeded(g, 1, 5)}
    d = client.post("/api/load", json={**BODY, "text": json.dumps(hist)}).json()
    assert d["kind"] == "history" and d["url"].startswith(f"/games/{GAME}?variant=zero_bid%3Apass#")
    text = (ROOT / "examples" / "puzzles" / "pouvoir-scrap.json").read_text(encoding="utf-8")
    d = client.post("/api/load", json={**BODY, "text": text}).json()
    assert d["kind"] == "puzzle"
    assert d["url"].startswith(f"/games/{GAME}?variant=tours-de-pouvoir#")
    start = json.loads(unquote(d["url"].split("#", 1)[1]))["start"]
    assert start["hand"] == [["candy", 11], ["scrap", 15]]      # the puzzle's position


@pytest.mark.parametrize("text, status, words", [
    ('{"hand": [["sand", 4]],\n "phase": "nap"}', 400, "pasted:2:11: phase:"),
    ('{"hand": [["sand", 4]],\n "bogus": 1}', 400, "pasted:2:11: bogus: not a state field"),
    ('{"hand": ', 400, "pasted:1:10: invalid JSON"),
    ("[1]", 400, "pasted: expected a JSON object"),
    ('{"game": "les-5-tours",\n "hand": 3}', 400, "pasted:2:10: hand:"),
    ('{"game": "les-5-tours", "variants": [], "params": {},\n "moves": [["fly"]]}', 400,
     "pasted:2:12: moves[0]: unknown action 'fly'"),
])
def test_bad_pasted_text_is_located(client, text, status, words):
    r = client.post("/api/load", json={**BODY, "text": text})
    assert r.status_code == status, r.text
    assert words in r.json()["error"]


# ---- compare --------------------------------------------------------------------------------

def _rows(html: str, kind: str) -> list:
    return [json.loads(unescape(j)) for j in
            re.findall(rf'<tr class="differs differs-{kind}[^"]*" data-move="([^"]*)"', html)]


def test_compare_opens_a_stored_witness(client):
    r = client.get(f"/compare?game={GAME}&witness=market_choice:winner:random")
    assert r.status_code == 200, r.text[:500]
    stored = json.loads((ROOT / "docs" / "witnesses" / f"{GAME}.json").read_text("utf-8"))
    w = next(x for x in stored["ambiguities"] if x["reading"] == "market_choice")
    assert w["move"] in _rows(r.text, "legality")
    assert 'class="differs differs-legality witness-move"' in r.text
    assert w["under_b"].replace("illegal (rule ", "").rstrip(")") in r.text   # the rule
    # a score witness shows the scores under both readings
    r = client.get(f"/compare?game={GAME}&witness=main_tower:one:all")
    assert r.status_code == 200 and 'id="scores"' in r.text
    assert 'class="differs differs-legality"><td>player 0</td><td>4</td><td>5</td>' in r.text


def test_compare_two_readings_on_a_posted_state(client):
    st = {"phase": "bidding", "turn": 0}
    g_nothing = load_game(GAME, ("zero_bid:nothing",))
    g_pass = load_game(GAME, ("zero_bid:pass",))
    from solver.web.explore import read_state
    s = read_state(g_nothing, st)
    differ = []
    for (m, _, _, ra), (_, _, _, rb) in zip(g_nothing.moves(s), g_pass.moves(s)):
        if (ra is None) != (rb is None):
            differ.append(m.to_json(g_nothing))
    assert differ, "the test state shows no disagreement"
    url = (f"/compare?game={GAME}&reading=zero_bid&a=nothing&b=pass&state="
           + quote(json.dumps(st)))
    r = client.get(url)
    assert r.status_code == 200, r.text[:500]
    assert _rows(r.text, "legality") == differ
    # the pair menu of the game page, and the default pair
    r2 = client.get(f"/compare?game={GAME}&pair=zero_bid:nothing:pass&state="
                    + quote(json.dumps(st)))
    assert _rows(r2.text, "legality") == differ
    assert client.get(f"/compare?game={GAME}").status_code == 200


@pytest.mark.parametrize("url, status, words", [
    ("/compare", 400, "game: missing"),
    ("/compare?game=nope", 404, "no game named 'nope'"),
    (f"/compare?game={GAME}&reading=colour", 400, "les-5-tours has no reading 'colour'"),
    (f"/compare?game={GAME}&reading=zero_bid&a=nothing&b=nothing", 400, "two different options"),
    (f"/compare?game={GAME}&reading=zero_bid&a=nothing&b=maybe", 400, "has no option 'maybe'"),
    (f"/compare?game={GAME}&reading=zero_bid&state=%7Bx", 400, "state:1:2: invalid JSON"),
    (f"/compare?game={GAME}&reading=zero_bid&state=%7B%22x%22%3A1%7D", 400,
     "state.x: not a state field"),
    (f"/compare?game={GAME}&witness=zero_bid", 400, "expected READING:A:B"),
    (f"/compare?game={GAME}&witness=zero_bid:pass:maybe", 400, "no stored witness"),
    (f"/compare?game={GAME}&pair=zero_bid", 400, "expected READING:A:B"),
])
def test_bad_compare_requests_are_one_line(client, url, status, words):
    r = client.get(url)
    assert r.status_code == status, r.text[:300]
    assert words in _error(r)
    _no_traceback(r)


# ---- puzzles --------------------------------------------------------------------------------

def test_puzzles_page_lists_the_examples(client):
    r = client.get("/puzzles")
    assert r.status_code == 200
    for p in sorted((ROOT / "examples" / "puzzles").glob("*.json")):
        assert f"/puzzles?file={p.name}" in r.text


def test_a_puzzle_is_answered_and_its_moves_replayed(client):
    r = client.get("/puzzles?file=lou.json")
    assert r.status_code == 200, r.text[:500]
    obj = json.loads((ROOT / "examples" / "puzzles" / "lou.json").read_text("utf-8"))
    answer = solve(obj)
    m = re.search(r'<pre class="json">(.*?)</pre>', r.text, re.S)
    assert json.loads(unescape(m.group(1))) == answer
    steps = answer["steps"]
    assert f'data-steps="{len(steps)}"' in r.text
    assert len(re.findall(r'<figure class="step"', r.text)) == len(steps) + 1
    link = unescape(re.search(r'<a href="([^"]+)" class="open">', r.text).group(1))
    pos = json.loads(unquote(link.split("#", 1)[1]))
    assert pos["cursor"] == 0 and len(pos["moves"]) == len(steps)
    # the explorer replays the solution from the puzzle's start
    d = client.post("/api/view", json={**BODY, "start": pos["start"], "moves": pos["moves"]})
    assert d.status_code == 200, d.text


def test_a_pasted_puzzle_with_an_error_keeps_the_text(client):
    text = '{"game": "les-5-tours",\n "hand": [["sand", 99]]}'
    r = client.post("/puzzles", data={"text": text, "backend": "search"})
    assert r.status_code == 400
    assert _error(r).startswith("puzzle:2:")
    assert "sand" in r.text and "99" in r.text          # the pasted text is still there
    _no_traceback(r)
    r = client.post("/puzzles", data={"text": "{", "backend": "search"})
    assert r.status_code == 400 and "puzzle:1:2: invalid JSON" in _error(r)
    r = client.post("/puzzles", data={"text": text, "backend": "magic"})
    assert r.status_code == 400 and "unknown backend 'magic'" in _error(r)
    r = client.get("/puzzles?file=nope.json")
    assert r.status_code == 400 and "no puzzle file 'nope.json'" in _error(r)


# ---- the command --------------------------------------------------------------------------

def test_serve_binds_localhost_by_default():
    from solver.cli.main import build_parser
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port) == ("127.0.0.1", 8000)
    r = run_cli("serve", "--help")
    assert r.returncode == 0
    assert "default: 127.0.0.1" in r.stdout and "default: 8000" in r.stdout
