"""Broken rules files: each fixture in tests/fixtures/broken/ starts with a comment line
``# expect: LINE:COL: <part of the message>``; loading it must raise SpecError at exactly that
place, and the CLI must print ``FILE:LINE:COL: message``, the line and a caret, exit 2."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, run_cli
from solver.lang.errors import SpecError
from solver.engine.game import load_path

BROKEN = sorted((FIXTURES / "broken").glob("*.rules"))
EXPECT = re.compile(r"^# expect: (\d+):(\d+): (.+)$")


def _expectation(path: Path) -> tuple[int, int, str]:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    m = EXPECT.match(first)
    assert m, f"{path.name}: the first line must be '# expect: LINE:COL: message'"
    return int(m.group(1)), int(m.group(2)), m.group(3)


def test_there_are_enough_broken_fixtures():
    assert len(BROKEN) >= 8
    for p in BROKEN:
        _expectation(p)


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_load_reports_line_col_and_message(path):
    line, col, text = _expectation(path)
    with pytest.raises(SpecError) as e:
        load_path(path)
    err = e.value
    assert err.span is not None
    assert (err.span.line, err.span.col) == (line, col), err.headline()
    assert Path(err.span.file).name == path.name
    assert text in err.message, err.message
    # The context shows the offending line with a caret under the column.
    src = path.read_text(encoding="utf-8").splitlines()[line - 1]
    assert err.context().splitlines() == ["    " + src, "    " + " " * (col - 1) + "^"]


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_cli_check_reports_the_error(path):
    line, col, text = _expectation(path)
    rel = path.relative_to(ROOT)
    r = run_cli("check", str(rel))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert lines, "nothing on stderr"
    assert lines[0].startswith(f"rulebook: {rel}:{line}:{col}: "), lines[0]
    assert text in lines[0]
    assert len(lines) == 3, r.stderr          # headline, source line, caret
    assert lines[2].strip() == "^"
    assert len(lines[2]) - len(lines[2].lstrip()) == 4 + col - 1


def test_a_correct_fixture_checks():
    """The same skeleton without the mistakes is accepted (the fixtures fail for their one
    reason, not for a common one)."""
    r = run_cli("check", "tests/fixtures/toy.rules")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith("tests/fixtures/toy.rules: ok")
    assert "all confirmed" in r.stdout


def test_syntax_error_in_an_expression_names_the_token():
    from solver.lang.syntax import parse_expr
    with pytest.raises(SpecError) as e:
        parse_expr("score(0) == ", "<expect>")
    assert e.value.span.file == "<expect>"
    assert "end of file" in e.value.message


def test_unknown_spec_name_is_a_spec_error():
    from solver.engine.game import load_game
    with pytest.raises(SpecError) as e:
        load_game("no-such-game")
    assert "no-such-game" in e.value.message
    assert "les-5-tours" in e.value.message     # the known names are listed
