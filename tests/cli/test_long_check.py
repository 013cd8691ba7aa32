"""`rulebook check` of every game says how far it is, and stopped (time limit: exit 4;
Ctrl-C: exit 130) prints the games it checked and names those it did not."""
from __future__ import annotations

import json

import pytest

from conftest import run_cli
from support.interrupt import interrupt


def test_check_stopped_by_its_time_limit_names_the_games_left():
    r = run_cli("check", "--time-limit", "0.01", "--json")
    assert r.returncode == 4, r.stderr
    out = json.loads(r.stdout)
    assert out["stopped"] == "time limit of 0.01 s"
    assert out["not_checked"] and out["not_checked"] == sorted(out["not_checked"])
    assert "Traceback" not in r.stderr


def test_check_interrupted_prints_what_it_checked():
    code, out, err = interrupt(["check", "--progress"], "games checked: 0/")
    assert code == 130, err
    lines = out.strip().splitlines()
    assert lines[-1].startswith("stopped (interrupted) after ") and "not checked: " in lines[-1]
    done = int(lines[-1].split("after ")[1].split(" of ")[0])
    assert done < 4 and sum(": ok (" in ln for ln in lines) == done


@pytest.mark.docs          # Sphinx comes with the docs extra: run by `make docs-browser`
def test_docs_stopped_by_its_time_limit_says_the_site_is_incomplete(tmp_path):
    r = run_cli("docs", "--time-limit", "0.5", "--out", str(tmp_path / "site"))
    assert r.returncode == 4, r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        f"rulebook: stopped (time limit of 0.5 s); the site in {tmp_path / 'site'} is "
        "incomplete")
