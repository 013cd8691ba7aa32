"""What the fuzzing hands the command line: one `Case` is one command (its arguments, the files
it reads), drawn by a Hypothesis strategy of a *stream*.  Each stream covers one kind of input:

- ``solve/GAME``: a valid puzzle of GAME (each input of its declared type), solved by both
  backends, whose answers must agree where both give one;
- ``solve-known``: a puzzle of the repository (examples, golden files) with small edits,
  solved by both backends likewise;
- ``solve-bad``: a puzzle file of any game, corrupted (`support.jsonfuzz`);
- ``moves`` and ``moves-bad``: a state file of any game, valid or corrupted, for `moves
  --state` (sometimes `--all`, sometimes a smaller board or another reading);
- ``options``: the options of every command (`--param`, `--variant`, `--players`, `--seed`,
  `--games`, `--depth`, `--timeout`, `--time-limit`), valid and not;
- ``play``: seeded playouts of every game on small boards, and of the tutorial's game;
- ``rules`` and ``rules-mutated``: rules files generated from the grammar, or a real spec
  with a few edits, through `check`, then `moves` and `play` when accepted.

Strategies draw names and indices, never the checked IR's objects themselves: Hypothesis
hashes what `sampled_from` is given, and hashing a program's IR took 0.4 s per input."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from hypothesis import strategies as st

from solver.engine.game import load_game
from solver.lang.resources import spec_dir
from solver.lang.sources import games_found
from support.jsonfuzz import ANY_JSON, corrupted, json_of, paths, text_of

FILE = "{file}"
ROOT = Path(__file__).resolve().parents[2]          # in a Case's argv: the path of its (first) input file


@dataclass(frozen=True)
class Case:
    stream: str
    argv: tuple[str, ...]
    data: bytes | None = None        # the input file's bytes, if the command reads one
    suffix: str = ".json"
    valid: bool = True               # drawn valid (not corrupted)
    compare: bool = False            # a valid puzzle: solve with both backends and compare
    then: tuple[tuple[str, ...], ...] = field(default=())   # commands run when this one is 0


@lru_cache(maxsize=None)
def spec_games() -> tuple[str, ...]:
    return tuple(sorted(g for g, (path, _) in games_found().items()
                        if path.parent == spec_dir()))


@lru_cache(maxsize=None)
def puzzle_games() -> tuple[str, ...]:
    return tuple(g for g in spec_games() if load_game(g).p.puzzles)


@lru_cache(maxsize=None)
def _shape(name: str):
    """What the strategies need of a game, as plain data: its puzzles (name, inputs with
    their types and whether they have a default), state fields, readings, params."""
    g = load_game(name)
    puzzles = tuple((d.name, tuple((i.name, i.type, i.default is not None)
                                   for i in d.inputs if not i.is_param))
                    for d in g.p.puzzles)
    state = tuple((f.name, f.type) for f in g.p.state)
    readings = tuple((r.name, tuple(o for o, _ in r.options)) for r in g.p.readings)
    params = tuple((p.name, p.type.lo, p.type.hi, p.default) for p in g.p.params)
    return puzzles, state, readings, params


# ---- puzzle and state files --------------------------------------------------------------------

@st.composite
def puzzles(draw, name: str):
    """A puzzle file's object for game ``name``: one of its puzzles, some of its inputs (each
    of its declared type; the parameters left at their defaults), maybe a reading."""
    decls, _, readings, _ = _shape(name)
    pname, inputs = decls[draw(st.integers(0, len(decls) - 1))]
    obj = {"game": name, "ask": pname.replace("_", "-")}
    for iname, itype, has_default in inputs:
        if not has_default or draw(st.booleans()):
            obj[iname] = draw(json_of(itype))
    if readings and draw(st.integers(0, 5)) == 0:
        rname, options = readings[draw(st.integers(0, len(readings) - 1))]
        obj["variants"] = [f"{rname}:{draw(st.sampled_from(options))}"]
    return obj


def puzzle_keys(name: str) -> list[str]:
    decls, _, _, _ = _shape(name)
    return sorted({i for _, inputs in decls for i, _, _ in inputs} | {"game", "ask", "variants"})


@st.composite
def states(draw, name: str):
    """A state file's object for game ``name``: some of its fields, each of its type."""
    _, fields, _, _ = _shape(name)
    picks = draw(st.lists(st.integers(0, len(fields) - 1), max_size=5, unique=True))
    return {fields[i][0]: draw(json_of(fields[i][1])) for i in picks}


def _file_bytes(draw, valid: bool, doc) -> tuple[bool, bytes]:
    data = text_of(draw, doc)
    return valid and data == json.dumps(doc, ensure_ascii=False).encode("utf-8"), data


SOLVE = ("solve", FILE, "--json", "--timeout", "1")


@lru_cache(maxsize=None)
def known_puzzles() -> tuple[str, ...]:
    """The puzzles of the repository (examples/puzzles, the golden files' inputs), as JSON
    texts: valid puzzles with answers, each a seed of `solve_known`."""
    out = []
    for path in sorted((ROOT / "examples" / "puzzles").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out += doc if isinstance(doc, list) else [doc]
    for path in sorted((ROOT / "tests" / "golden").glob("*/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc.get("input"), dict) and "game" in doc["input"]:
            out.append(doc["input"])
    return tuple(json.dumps(d) for d in out)


@st.composite
def solve_known(draw):
    """A puzzle of the repository with at most two small edits that keep it well typed (a
    list entry dropped, a key of an input that has a default left out, a list's entries
    reversed), solved by both backends: mostly puzzles that have an answer."""
    doc = json.loads(draw(st.sampled_from(known_puzzles())))
    edits = []
    for _ in range(draw(st.integers(0, 2))):
        lists = [p for p in paths(doc) if p and isinstance(_at(doc, p), list) and _at(doc, p)]
        kind = draw(st.sampled_from(["drop", "reverse", "key"]))
        if kind in ("drop", "reverse") and lists:
            p = draw(st.sampled_from(lists))
            seq = list(_at(doc, p))
            if kind == "drop":
                del seq[draw(st.integers(0, len(seq) - 1))]
            else:
                seq.reverse()
            doc = _put(doc, p, seq)
            edits.append(kind)
        elif kind == "key":
            keys = sorted(k for k in doc if k not in ("game", "ask", "puzzle"))
            if keys:
                k = draw(st.sampled_from(keys))
                doc = {a: b for a, b in doc.items() if a != k}
                edits.append(kind)
    return Case("solve-known", SOLVE, json.dumps(doc).encode(), compare=True)


def _at(j, path):
    for k in path:
        j = j[k]
    return j


def _put(j, path, new):
    if not path:
        return new
    if isinstance(j, list):
        return [(_put(x, path[1:], new) if i == path[0] else x) for i, x in enumerate(j)]
    return {k: (_put(x, path[1:], new) if k == path[0] else x) for k, x in j.items()}


@st.composite
def solve_valid(draw, name: str):
    doc = draw(puzzles(name))
    return Case(f"solve/{name}", SOLVE, json.dumps(doc).encode(), compare=True)


@st.composite
def solve_bad(draw):
    name = draw(st.sampled_from(puzzle_games()))
    doc = draw(puzzles(name).flatmap(lambda d: corrupted(d, puzzle_keys(name))))
    valid, data = _file_bytes(draw, False, doc)
    if draw(st.integers(0, 9)) == 0:        # a list of puzzles
        data = b"[" + data + b", " + data + b"]"
    backend = draw(st.sampled_from(["search", "search", "z3"]))
    return Case("solve-bad", SOLVE + ("--backend", backend), data, valid=False)


@st.composite
def moves_state(draw, corrupt: bool):
    """`moves --state` of a state file: drawn by type (listing the moves of a full board
    takes seconds), or corrupted (most are refused in milliseconds)."""
    name = draw(st.sampled_from(spec_games()))
    _, fields, readings, params = _shape(name)
    doc = draw(states(name))
    if corrupt:
        doc = draw(corrupted(doc, [f for f, _ in fields]))
    valid, data = _file_bytes(draw, not corrupt, doc)
    argv = ["moves", name, "--state", FILE, "--json"]
    if draw(st.integers(0, 3)) == 0:
        argv.append("--all")
    if not corrupt:     # (another reading or size compiles the game again: 1 to 3 s)
        argv += draw(_valid_options(readings, params))
    return Case("moves-bad" if corrupt else "moves", tuple(argv), data, valid=valid)


# ---- command-line options ----------------------------------------------------------------------

# Parameter values kept to a few per game, so that the compiled games stay in `load_game`'s
# cache (a new combination compiles the game again: 1 to 3 s).
_SMALL = {"w": [3, 4], "h": [3, 4], "players": [2, 3], "levels": [3, 4], "rounds": [2],
          "stack": [1]}


@st.composite
def _valid_options(draw, readings, params):
    """Options a user may give: a reading's option, a small parameter value (most often
    nothing)."""
    out: list[str] = []
    if readings and draw(st.integers(0, 3)) == 0:
        rname, options = draw(st.sampled_from(readings))
        out += ["--variant", f"{rname}:{draw(st.sampled_from(options))}"]
    names = [p for p, *_ in params if p in _SMALL]
    if names and draw(st.integers(0, 3)) == 0:
        for p in draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)):
            out += ["--param", f"{p}={draw(st.sampled_from(_SMALL[p]))}"]
    return out


NUMBERS = st.one_of(st.integers(-3, 12).map(str), st.sampled_from(
    ["", " ", "x", "3.5", "1e3", "-0", "+2", " 4", "0x10", "\u0663", "9" * 30, "nan", "inf",
     "-inf", "1_000", "٣٣", "2 2", "--"]))
WORDS = st.one_of(st.text(max_size=8), st.sampled_from(
    ["nope", "players", "w", "gate", "gate:", ":free", "gate:free:x", "zero_bid:pass",
     "gate:blocked", "tours-de-pouvoir", "torres-advanced", "les-5-tours", "x:y", "=", "w=3"]))


@st.composite
def _any_options(draw, readings, params):
    """A mix of options, valid and not: parameters (known, unknown, out of range, not a
    number, set twice), readings (known, another game's, malformed, two options of one),
    a number of players."""
    out: list[str] = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["param", "param", "variant", "variant", "players"]))
        if kind == "param":
            pname = draw(st.one_of(st.sampled_from([p for p, *_ in params] or ["players"]),
                                   WORDS))
            sep = draw(st.sampled_from(["=", "=", "=", "", "==", " = "]))
            out += ["--param", f"{pname}{sep}{draw(NUMBERS)}"]
        elif kind == "variant":
            if readings and draw(st.booleans()):
                rname, options = draw(st.sampled_from(readings))
                out += ["--variant", f"{rname}:{draw(st.sampled_from(options))}"]
            else:
                out += ["--variant", draw(WORDS)]
        else:
            out += ["--players", draw(NUMBERS)]
    return out


_COMMAND_OPTIONS = {
    "moves": [[], ["--json"], ["--all", "--json"]],
    "play": [["--seed"], ["--games"], ["--json"], ["--time-limit"]],
    "check": [[], ["--json"]],
    "examples": [[]],
    "solve": [["--timeout"], ["--backend"], ["--time-limit"]],
    "prove": [["--depth"], ["--timeout"], ["--jobs"]],
    "ambiguities": [["--timeout"]],
}
# Values of the numeric options that a command refuses before any long work starts.
_BAD_NUMBERS = st.sampled_from(["-1", "-5", "x", "", "nan", "inf", "-inf", "1e999", "-0.5",
                                "0x3", "--", "1,5"])
# Numbers that are valid but out of any need (a depth of 10^40): for the quick commands only.
_HUGE_NUMBERS = st.sampled_from(["9" * 40, "1e40", "\u0663"])


@st.composite
def options(draw):
    """A command with options drawn from `_any_options` and the command's own.  `prove` and
    `ambiguities` run for minutes on a valid command line: they get at least one bad value,
    so the case checks their refusal."""
    command = draw(st.sampled_from(sorted(_COMMAND_OPTIONS)))
    name = draw(st.sampled_from(spec_games()))
    _, _, readings, params = _shape(name)
    if command == "solve":
        doc = draw(puzzles(name)) if name in puzzle_games() else {"game": name}
        argv = ["solve", FILE, "--json"]
        data = json.dumps(doc).encode()
    else:
        argv = [command, name]
        data = None
    argv += draw(_any_options(readings, params)) if command != "solve" else []
    long = command in ("prove", "ambiguities", "examples")
    bad = False
    for opt in draw(st.lists(st.sampled_from(_COMMAND_OPTIONS[command]), max_size=2)):
        if not opt:
            continue
        flag = opt[0]
        if flag in ("--json", "--all"):
            argv.append(flag)
            continue
        if flag == "--backend":
            argv += [flag, draw(st.sampled_from(["search", "z3", "Z3", "", "sat"]))]
            continue
        if long or draw(st.booleans()):
            argv += [flag, draw(_BAD_NUMBERS)]
            bad = True
        elif flag in ("--seed", "--games", "--timeout") and draw(st.integers(0, 5)) == 0:
            argv += [flag, draw(_HUGE_NUMBERS if flag == "--seed" else
                                st.sampled_from(["\u0663", "1e-9", "0.001"]))]
        elif flag in ("--seed",):
            argv += [flag, str(draw(st.integers(0, 2**70)))]
        elif flag == "--games":
            argv += [flag, str(draw(st.integers(1, 2)))]
        elif flag in ("--timeout", "--time-limit"):
            argv += [flag, draw(st.sampled_from(["0.5", "1", "2"]))]
    if long and not bad:
        argv += [draw(st.sampled_from(["--timeout", "--time-limit"])), draw(_BAD_NUMBERS)]
    if command == "play" and "--time-limit" not in argv:
        argv += ["--time-limit", "5"]
    if command in ("moves", "play", "check") and name.startswith("torres") and \
            not any(a.startswith(("w=", "h=")) for a in argv):
        argv += ["--param", "w=4", "--param", "h=4"]     # the 8x8 board's --all takes 5 s
    return Case("options", tuple(argv), data, valid=False)


# ---- playouts -----------------------------------------------------------------------------------

_PLAY_PATHS = ("docs/tutorial/pile-up.rules", "tests/fixtures/toy.rules",
               "tests/fixtures/turns.rules")


@st.composite
def play(draw):
    """`play` of a game (a spec's, on a small board, or a file without a winner), a seed and a
    number of games that are valid; the time limit keeps a long playout bounded (exit 4)."""
    name = draw(st.sampled_from(spec_games() + _PLAY_PATHS))
    argv = ["play", name, "--seed", str(draw(st.one_of(st.integers(0, 20),
                                                        st.integers(0, 2**64)))),
            "--games", str(draw(st.integers(1, 3))), "--time-limit", "5"]
    if name in spec_games():
        _, _, readings, params = _shape(name)
        argv += draw(_valid_options(readings, params))
        if name.startswith("torres") and "--param" not in argv:
            argv += ["--param", "w=4", "--param", "h=4", "--players", "2"]
    if draw(st.booleans()):
        argv.append("--json")
    if draw(st.integers(0, 4)) == 0:
        argv.append("--trace")
    return Case("play", tuple(argv))


# ---- the streams --------------------------------------------------------------------------------

def streams() -> dict[str, float]:
    """Each stream's share of a round's time (a weight), by name; read without compiling any
    game (the test collection names the chunks)."""
    out = {f"solve/{g}": 0.75 for g in spec_games()}
    out.update({"solve-known": 2.5, "solve-bad": 6.0, "moves": 1.5, "moves-bad": 3.0,
                "options": 3.0, "play": 1.0, "rules": 1.5, "rules-mutated": 1.0})
    return out


def strategy(stream: str):
    """The strategy of Cases of ``stream`` (None: a game without puzzles)."""
    if stream.startswith("solve/"):
        game = stream.partition("/")[2]
        return solve_valid(game) if game in puzzle_games() else None
    from support.rulesfuzz import rules_generated, rules_mutated
    return {"solve-known": solve_known, "solve-bad": solve_bad,
            "moves": lambda: moves_state(False), "moves-bad": lambda: moves_state(True),
            "options": options, "play": play, "rules": rules_generated,
            "rules-mutated": rules_mutated}[stream]()


__all__ = ["Case", "FILE", "streams", "strategy", "puzzles", "states", "puzzle_keys",
           "spec_games", "puzzle_games", "ANY_JSON"]
