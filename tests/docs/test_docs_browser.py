"""The documentation site in a real browser: build it (or take `make docs`'s build), serve it on
localhost, open a game page in headless Chromium, and check that the rules, the highlighted
code and an SVG diagram are in the rendered DOM; keep a screenshot in build/artefacts/.

Not part of `make test` (marker `docs`: building the site takes a while); `make docs-browser`
and `.ci/run` run it.  Chromium is Debian's `/usr/bin/chromium` (or $RULEBOOK_CHROMIUM); when it
is missing the test FAILS, unless RULEBOOK_ALLOW_NO_BROWSER=1 says skipping is fine.
"""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import struct
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTEFACTS = ROOT / "build" / "artefacts"

pytestmark = pytest.mark.docs

# The issue asks for the Torres page.  spec/torres.rules is being written on another branch;
# until it is merged the test opens the Les 5 Tours page, which exercises the same generated
# sections (rules, highlighted code, witness diagrams).  Once torres is in spec/, it is used.
GAME = "torres" if (ROOT / "spec" / "torres.rules").is_file() else "les-5-tours"


def _chromium() -> str:
    exe = os.environ.get("RULEBOOK_CHROMIUM", "/usr/bin/chromium")
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        exe = shutil.which("chromium") or ""
    if not exe:
        msg = ("headless Chromium not found (/usr/bin/chromium): apt-get install -y chromium, "
               "or set RULEBOOK_ALLOW_NO_BROWSER=1 to skip this test knowingly")
        if os.environ.get("RULEBOOK_ALLOW_NO_BROWSER") == "1":
            pytest.skip(msg)
        pytest.fail(msg)
    return exe


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built HTML: $RULEBOOK_DOCS_HTML (make docs-browser points it at make docs's build),
    else a fresh build with warnings as errors."""
    given = os.environ.get("RULEBOOK_DOCS_HTML")
    if given:
        path = Path(given)
        assert (path / "index.html").is_file(), f"RULEBOOK_DOCS_HTML={given}: no index.html"
        return path
    out = tmp_path_factory.mktemp("html")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", str(ROOT / "docs"), str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"sphinx failed:\n{proc.stdout}\n{proc.stderr}"
    return out


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _browser(url: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", *extra, url]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}):\n{proc.stderr[-2000:]}"
    return proc


class _Dom(HTMLParser):
    """What the checks need from the rendered DOM."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.stack: list[tuple[str, set[str]]] = []
        self.code_spans = 0          # Pygments token spans inside rulebook code blocks
        self.code_span_classes: set[str] = set()
        self.svgs = 0
        self.witness_svgs = 0
        self.svg_rects = 0
        self.highlighted = 0         # SVG shapes drawn in the highlight colour
        self.title = ""
        self._in_title = False

    def _inside(self, cls: str) -> bool:
        return any(cls in c for _, c in self.stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        if tag == "span" and self._inside("highlight-rulebook") and classes:
            self.code_spans += 1
            self.code_span_classes |= classes
        if tag == "svg":
            self.svgs += 1
            if self._inside("rulebook-witness"):
                self.witness_svgs += 1
        if tag == "rect" and self.stack and any(t == "svg" for t, _ in self.stack):
            self.svg_rects += 1
            if (a.get("stroke") or "").lower() == "#d62728":
                self.highlighted += 1
        if tag == "title":
            self._in_title = True
        if tag not in ("br", "img", "meta", "link", "input", "hr", "rect", "line", "path",
                       "circle", "polyline", "polygon", "ellipse", "use", "stop"):
            self.stack.append((tag, classes))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_game_page_renders_in_chromium(server, tmp_path):
    url = f"{server}/games/{GAME}.html"
    dom_text = _browser(url, tmp_path, "--dump-dom", "--virtual-time-budget=5000").stdout
    dom = _Dom()
    dom.feed(dom_text)
    from solver.engine.game import load_game
    g = load_game(GAME)
    assert g.p.title in dom.title, f"the page title {dom.title!r} does not name {g.p.title!r}"
    # Every rule of every action has its anchor (and so its section) on the page.
    from solver.lang import ir
    from solver.docs.docpages import anchor
    rules = [f"{GAME}.{a.name}.{s.name}" for a in g.p.actions for s in a.body
             if isinstance(s, ir.Requires)]
    assert rules, "the game has no rules to show"
    missing = [r for r in rules if anchor("rule", r) not in dom.ids]
    assert not missing, f"rules missing from the rendered page: {missing}"
    for a in g.p.actions:
        assert anchor("action", f"{GAME}.{a.name}") in dom.ids
    # Cross-references (the rulebook domain's roles) resolve to anchors that exist.
    here = ("", f"{GAME}.html")
    xrefs = [h.split("#", 1)[1] for h in dom.hrefs
             if "#rulebook-" in h and h.split("#", 1)[0] in here]
    assert xrefs, "no cross-reference between rules on the page"
    assert not [x for x in xrefs if x not in dom.ids], "cross-references to missing anchors"
    # The formal text is highlighted by the rulebook lexer: keywords, names, operators.
    assert dom.code_spans > 100, f"only {dom.code_spans} highlighted tokens"
    assert {"k", "nf"} <= dom.code_span_classes, dom.code_span_classes
    # At least one inline SVG diagram, with shapes; a reading's witness marks the disagreement.
    assert dom.svgs >= 1 and dom.svg_rects > 0, "no SVG diagram in the page"
    if g.p.readings:
        assert dom.witness_svgs >= 1, (f"no witness diagram for the readings: store them with "
                                       f"python docs/refresh.py {GAME} --only witnesses")
        assert dom.highlighted >= 1, "no witness marks the disagreement in the highlight colour"

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / f"docs-{GAME}.png"
    shot.unlink(missing_ok=True)
    _browser(url, tmp_path, f"--screenshot={shot}", "--window-size=1280,2000",
             "--hide-scrollbars", "--virtual-time-budget=5000")
    assert shot.is_file(), "chromium wrote no screenshot"
    assert _png_size(shot) == (1280, 2000)
    assert shot.stat().st_size > 20_000, "the screenshot looks blank"


def test_every_page_is_served(server, site, tmp_path):
    """Each game of spec/ has a page, and the index links to it."""
    from solver.docs.sphinxext import spec_games
    index = (site / "index.html").read_text(encoding="utf-8")
    for name in spec_games():
        assert (site / "games" / f"{name}.html").is_file(), f"no page for {name}"
        assert f"games/{name}.html" in index, f"the index does not link {name}"
