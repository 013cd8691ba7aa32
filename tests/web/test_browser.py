"""The explorer in a real browser: `rulebook serve` on a free localhost port, driven in Debian's
headless Chromium by Selenium (chromium-driver).  Les 5 Tours and Torres are played by clicking,
the board and the refused moves' rule names are checked against the interpreter, a stored
witness opens in the compare view, a puzzle's answer is stepped through; screenshots (desktop,
1280x800, and a phone's 390 px) go to build/artefacts/.

Not part of `make test` (marker `browser`; run with `-m browser`: `make web-browser`).  The
browser is /usr/bin/chromium with /usr/bin/chromedriver (or $RULEBOOK_CHROMIUM and
$RULEBOOK_CHROMEDRIVER); when they are missing the test FAILS, unless
RULEBOOK_ALLOW_NO_BROWSER=1 says skipping is fine."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from solver.engine.game import load_game

ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = ROOT / "build" / "artefacts"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def _only_when_asked(request):
    """Skip before the server and the browser start (autouse: set up first in its scope)."""
    if "browser" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("a browser test: run it with -m browser (make web-browser)")


def _exe(env: str, default: str, name: str) -> str:
    exe = os.environ.get(env, default)
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        exe = shutil.which(name) or ""
    if not exe:
        msg = (f"{default} not found: apt-get install -y chromium chromium-driver, or set "
               f"RULEBOOK_ALLOW_NO_BROWSER=1 to skip this test knowingly")
        if os.environ.get("RULEBOOK_ALLOW_NO_BROWSER") == "1":
            pytest.skip(msg)
        pytest.fail(msg)
    return exe


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """`rulebook serve` in a subprocess (this checkout's code), stopped after the tests."""
    port = _free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                     else "")
    proc = subprocess.Popen([sys.executable, "-m", "solver", "serve", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/static/explorer.css", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                out = proc.stdout.read() if proc.poll() is not None else ""
                pytest.fail(f"rulebook serve did not start on port {port}:\n{out}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    chromium = _exe("RULEBOOK_CHROMIUM", "/usr/bin/chromium", "chromium")
    chromedriver = _exe("RULEBOOK_CHROMEDRIVER", "/usr/bin/chromedriver", "chromedriver")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1280,800",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        opts.add_argument(flag)
    d = webdriver.Chrome(service=Service(chromedriver), options=opts)
    d.set_page_load_timeout(120)
    d.set_script_timeout(60)
    try:
        yield d
    finally:
        d.quit()


# ---- helpers --------------------------------------------------------------------------------

def _wait(d, cond, what: str, timeout: float = 90):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait
    # The page swaps its parts in after each answer: an element read meanwhile may be gone.
    return WebDriverWait(d, timeout, poll_frequency=0.1,
                         ignored_exceptions=(StaleElementReferenceException,)) \
        .until(lambda _: cond(), message=what)


def _css(d, sel):
    from selenium.webdriver.common.by import By
    return d.find_elements(By.CSS_SELECTOR, sel)


def _position(d) -> str:
    return d.execute_script("var e = document.querySelector('#position');"
                            "return e ? e.textContent : '';")


def _click_move(d, move: list, cls: str = "legal"):
    """Click the button of ``move`` and wait until the page answers."""
    data = json.dumps(move)
    buttons = [b for b in _css(d, f"button.move.{cls}") if b.get_attribute("data-move") == data]
    assert buttons, f"no {cls} button for {data}"
    buttons[0].click()


def _wait_position(d, k: int, n: int | None = None):
    n = k if n is None else n
    _wait(d, lambda: _position(d) == f"move {k} of {n}", f"position move {k} of {n}")


def _message(d) -> str:
    el = _css(d, "#message")
    return el[0].text if el and el[0].is_displayed() else ""


def _refused_rules(d) -> set[str]:
    return {e.get_attribute("data-rule") for e in _css(d, "details.refused-group")}


def _interpreter(game, moves):
    """The state after ``moves`` (JSON) from the initial state, and its refusing rules."""
    from solver.web.explore import read_move
    st = game.initial()
    for j in moves:
        st, _ = game.apply(st, read_move(game, j))
    return st, {r.rule for _, _, _, r in game.moves(st) if r is not None}


def _shot(d, name: str, phone: bool = False) -> Path:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTEFACTS / f"web-{name}.png"
    path.unlink(missing_ok=True)
    if phone:
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                          {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    try:
        d.save_screenshot(str(path))
        if phone:
            wide = d.execute_script("return document.documentElement.scrollWidth")
            assert wide <= 390, f"{name}: the page is {wide} px wide on a 390 px phone"
    finally:
        if phone:
            d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert path.is_file() and path.stat().st_size > 10_000, f"{path}: blank screenshot?"
    return path


def _history(d) -> dict:
    """The history JSON the page copies."""
    _css(d, "#copy")[0].click()
    _wait(d, lambda: _css(d, "#paste")[0].get_attribute("value").startswith("{"), "history")
    return json.loads(_css(d, "#paste")[0].get_attribute("value"))


# ---- the tests ------------------------------------------------------------------------------

def test_les_5_tours_by_clicking(server, driver):
    d = driver
    g = load_game("les-5-tours")
    d.get(f"{server}/games/les-5-tours")
    _wait(d, lambda: _position(d) == "move 0 of 0", "the game page")
    assert "Les 5 Tours" in d.title
    played = []
    for k in range(1, 6):                     # the first legal move each time, by clicking
        first = _css(d, "#legal button.move")[0]
        move = json.loads(first.get_attribute("data-move"))
        first.click()
        _wait_position(d, k)
        played.append(move)
        st, rules = _interpreter(g, played)
        title = _css(d, "#board svg text.title")[0].text
        assert title.startswith(f"after move {k}:"), title
        assert _refused_rules(d) == rules
        legal = [json.loads(b.get_attribute("data-move")) for b in _css(d, "#legal button.move")]
        assert legal == [m.to_json(g) for m, _, _ in g.legal(st)]
    # the state drawn is the interpreter's: the hand holds what was drawn
    assert _history(d)["moves"] == played
    # a refused move, clicked: the rule that refuses it is shown
    st, _ = _interpreter(g, played)
    m, _, _, ref = next(x for x in g.moves(st) if x[3] is not None)
    details = [e for e in _css(d, "details.refused-group")
               if e.get_attribute("data-rule") == ref.rule
               and e.get_attribute("data-action") == m.action][0]
    details.find_element("css selector", "summary").click()
    _click_move(d, m.to_json(g), "refused")
    _wait(d, lambda: f"is refused by rule {ref.rule}: {ref.message}" in _message(d),
          "the refusal message")
    assert _position(d) == "move 5 of 5"
    # keyboard: undo twice, redo once, a random move drops the redo tail
    body = _css(d, "body")[0]
    body.send_keys("u")
    _wait_position(d, 4, 5)
    body.send_keys("u")
    _wait_position(d, 3, 5)
    body.send_keys("r")
    _wait_position(d, 4, 5)
    body.send_keys("n")
    _wait_position(d, 5)
    _shot(d, "les-5-tours")
    _shot(d, "les-5-tours-phone", phone=True)


def test_torres_by_clicking(server, driver):
    d = driver
    g = load_game("torres")
    d.get(f"{server}/games/torres")
    _wait(d, lambda: _position(d) == "move 0 of 0", "the Torres page", timeout=120)
    played = []
    for k in range(1, 4):
        first = _css(d, "#legal button.move")[0]
        move = json.loads(first.get_attribute("data-move"))
        first.click()
        _wait_position(d, k)
        played.append(move)
        # the board: one more piece, on the square the move framed
        pieces = _css(d, "#board svg circle.piece")
        assert len(pieces) == k, f"{len(pieces)} pieces after {k} placements"
        mark = _css(d, "#board svg rect.mark")
        assert len(mark) == 1, "the move's square is not framed"
        x, y = (float(mark[0].get_attribute(a)) for a in ("x", "y"))
        w, h = (float(mark[0].get_attribute(a)) for a in ("width", "height"))
        assert any(x <= float(p.get_attribute("cx")) <= x + w and
                   y <= float(p.get_attribute("cy")) <= y + h for p in pieces), \
            "no piece on the framed square"
        _, rules = _interpreter(g, played)
        assert _refused_rules(d) == rules
    # a move typed by hand onto an occupied square: refused, and by which rule
    from solver.engine.evaluate import Refused
    from solver.web.explore import read_move
    st, _ = _interpreter(g, played)
    with pytest.raises(Refused) as refused:
        g.apply(st, read_move(g, played[-1]))
    ref = refused.value
    box = _css(d, "#try-move")[0]
    box.send_keys(json.dumps(played[-1]))
    _css(d, "#try-form button")[0].click()
    _wait(d, lambda: f"refused by rule {ref.rule}" in _message(d), "the typed move's refusal")
    # the filter narrows the refused moves to those of one square
    flt = _css(d, "#filter")[0]
    flt.send_keys("[0,0]")
    _wait(d, lambda: _css(d, "#refused button.move") and all(
        "[0, 0]" in b.get_attribute("data-move") for b in _css(d, "#refused button.move")),
        "the filtered refused moves")
    _shot(d, "torres")
    _shot(d, "torres-phone", phone=True)


def test_history_copied_and_replayed(server, driver):
    d = driver
    d.get(f"{server}/games/les-5-tours?seed=2&move=6")
    _wait(d, lambda: _position(d) == "move 6 of 6", "the seeded position")
    hist = _history(d)
    assert len(hist["moves"]) == 6
    d.get(f"{server}/games/les-5-tours")
    _wait(d, lambda: _position(d) == "move 0 of 0", "a fresh page")
    box = _css(d, "#paste")[0]
    d.execute_script("arguments[0].value = arguments[1]", box, json.dumps(hist))
    _css(d, "#load-form button")[0].click()
    _wait_position(d, 6)
    assert _history(d)["moves"] == hist["moves"]
    # a pasted state with an error: one line, located
    d.execute_script("arguments[0].value = arguments[1]", _css(d, "#paste")[0],
                     '{"hand": [["sand", 4]],\n "bogus": 1}')
    _css(d, "#load-form button")[0].click()
    _wait(d, lambda: "pasted:2:11: bogus: not a state field" in _message(d), "the located error")


def test_witness_opens_in_the_compare_view(server, driver):
    d = driver
    d.get(f"{server}/")
    hrefs = [a.get_attribute("href") or "" for a in _css(d, "a")]
    link = [a for a, h in zip(_css(d, "a"), hrefs)
            if "witness=gate%3Afree%3Aaround" in h and "game=torres&" in h]
    assert link, "the index does not link the gate witness"
    link[0].click()
    _wait(d, lambda: _css(d, "tr.witness-move"), "the compare view", timeout=180)
    row = _css(d, "tr.witness-move")[0]
    assert "differs-legality" in row.get_attribute("class")
    cells = row.find_elements("css selector", "td")
    assert cells[1].text.startswith("legal") and "refused by reach" in cells[2].text
    assert json.loads(row.get_attribute("data-move"))[0] == "move"
    assert _css(d, "#board svg rect.mark"), "the witness move is not framed on the board"
    _shot(d, "compare-torres-gate")


def test_puzzle_answer_stepped_through(server, driver):
    d = driver
    d.get(f"{server}/puzzles?file=demolish-first.json")
    _wait(d, lambda: _css(d, ".answer .stepper"), "the answer")
    steps = int(_css(d, ".stepper")[0].get_attribute("data-steps"))
    assert steps >= 2

    def visible():
        return [f.get_attribute("data-step") for f in _css(d, "figure.step") if f.is_displayed()]
    assert visible() == ["0"]
    _css(d, ".stepper .next")[0].click()
    assert visible() == ["1"]
    _css(d, "body")[0].send_keys("\ue014")        # the right arrow key
    assert visible() == ["2"]
    _shot(d, "puzzle-demolish-first")
