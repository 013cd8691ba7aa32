"""The `rulebook` command line: check, moves, solve, prove, examples, ambiguities, play."""
from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
import time
from pathlib import Path

from ..lang.errors import InputError, RulebookError

EXIT_BAD_INPUT = 2
EXIT_CONTRADICTED = 1
EXIT_OUT_OF_MEMORY = 3
EXIT_STOPPED = 4          # --time-limit ran out: the answers printed are partial
EXIT_INTERRUPTED = 130    # Ctrl-C: likewise, as a shell reports a SIGINT

DESCRIPTION = """\
rulebook: the rules of tower-building games, written once in spec/*.rules and compiled into a
reference interpreter and Z3 constraints.

Games are named after their spec file (e.g. les-5-tours).  --variant selects an expansion
(a spec file that extends the game) or a reading of an ambiguous rule, written READING:OPTION.
Errors in a rules file or an input are reported as FILE:LINE:COL (or the input field) with
exit status 2.

Long commands (prove, ambiguities, solve, examples, play) say on stderr what they are doing
and how far they are (when stderr is a terminal and not under --json, or with --progress).
Stopped by Ctrl-C or by their --time-limit, they print what they found so far and say what it
covers (the parameters, the depth, how many of the paths or games); the exit status is then
130 (Ctrl-C) or 4 (time limit), unless the partial answer is already a failure (a refuted
invariant, a contradicted example: 1)."""


def _game_args(p: argparse.ArgumentParser, players: bool = True) -> None:
    p.add_argument("game", help="the game, by spec name (e.g. les-5-tours)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME",
                   help="an expansion (tours-de-pouvoir) or a reading (zero_bid:pass); repeatable")
    if players:
        p.add_argument("--players", type=int, default=None,
                       help="number of players (the game's `players` parameter)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=N",
                   help="set a parameter of the game (e.g. a smaller board: w=4); repeatable")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


def _long_args(p: argparse.ArgumentParser, time_limit: bool = True) -> None:
    """--progress and --time-limit, for the commands that can run for minutes."""
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="say on stderr what the command is doing and how far it is: one "
                   "line kept up to date on a terminal, a line every few seconds otherwise "
                   "(default: on when stderr is a terminal, except under --json)")
    if time_limit:
        p.add_argument("--time-limit", type=_seconds, default=None, metavar="SECONDS",
                       help="stop after this many seconds and print what was found so far, "
                       "with what it covers; exit status 4 (default: no limit; Ctrl-C "
                       "stops it the same way, exit status 130)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rulebook", description=DESCRIPTION,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("check", help="parse and type-check a spec, run its examples",
                       description="Parse and type-check a game's spec (and its variants), then "
                       "run its worked examples.  Exit 0 when the spec is well formed and every "
                       "example is confirmed, 1 when an example is contradicted, 2 on errors.")
    p.add_argument("game", nargs="?", help="a game name or a .rules file (default: every spec)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")

    p = sub.add_parser("moves", help="legal moves of a state, with the rule behind each refusal",
                       description="List every action instance of a state: legal ones, and for "
                       "illegal ones the named `requires` that forbids them.  The state is the "
                       "game's initial state, or a JSON object of state fields (missing fields "
                       "keep their initial value) given with --state.")
    _game_args(p)
    p.add_argument("--state", metavar="FILE", help="a JSON file of state fields ('-' for stdin)")
    p.add_argument("--all", action="store_true", help="also list the illegal moves")

    p = sub.add_parser("solve", help="solve puzzles (feasibility, witness, optimum)",
                       description="Solve one puzzle (a JSON object) or a JSON list of puzzles; "
                       "answers come back as one object or a list in the same order.  Every "
                       "answer of the z3 backend is replayed in the interpreter before it is "
                       "shown.  A solver that gives up answers \"unknown\", never \"impossible\".  "
                       "Stopped by --time-limit or Ctrl-C, it prints the answers found so "
                       "far, a puzzle not finished answering {\"stopped\": WHY}.")
    p.add_argument("file", help="a JSON puzzle file ('-' for stdin)")
    p.add_argument("--backend", choices=["search", "z3"], default=None,
                   help="search: exhaustive interpreter search (default, faster on these "
                   "sizes); z3: the Z3 backend")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="time limit, seconds (60): of each z3 query, and of a search by branch "
                   "and bound, which then answers \"unknown\" with the best found so far "
                   "(best_found) and an upper bound of the optimum (at_most)")
    p.add_argument("--svg", metavar="FILE", help="draw the state the (first) puzzle's first "
                   "solution reaches (the start state when there is none); the cells the last "
                   "move shows are highlighted")
    p.add_argument("--json", action="store_true", help="print compact JSON (default: indented)")
    _long_args(p)

    p = sub.add_parser("prove", help="prove the spec's invariants",
                       description="Prove each invariant: 'inductive' (1-induction, jointly), "
                       "else 'holds up to depth k' by bounded model checking from the initial "
                       "state, or 'refuted' with a trace replayed in the interpreter.  With "
                       "--time-limit, bounded model checking comes first, one depth at a time, "
                       "then the inductive step with the time left; stopped (the time limit or "
                       "Ctrl-C), each invariant says what was established: 'holds up to depth "
                       "k' for the depths completed, else 'not decided'.  Exit status: 1 when "
                       "an invariant is refuted, else 4 when the time limit stopped the proof, "
                       "130 on Ctrl-C, 0 otherwise.")
    _game_args(p)
    p.add_argument("--depth", type=int, default=4, help="bounded model checking depth")
    p.add_argument("--invariant", action="append", metavar="NAME",
                   help="only this invariant (repeatable); the others are still assumed as "
                   "auxiliaries of the induction")
    p.add_argument("--alone", action="store_true",
                   help="with --invariant: assume none of the other invariants; the named "
                   "ones must be inductive together, and each step query checks only their "
                   "conjuncts (a proof of part of the set where the whole is out of reach)")
    p.add_argument("--timeout", type=float, default=300.0, help="z3 time limit, seconds")
    p.add_argument("--step-timeout", type=float, default=5.0,
                   help="z3 time limit per query of the inductive step, seconds (5); a query "
                   "over it leaves its invariant to bounded model checking, never 'proved'")
    p.add_argument("--split-lengths", action="store_true",
                   help="retry a step query z3 gives up on (within 2 s) case by case over the "
                   "lengths of the sequences the step changes: slower, but it proves counts "
                   "over items pushed onto sequences (clock-towers' conserved)")
    p.add_argument("--split-on", action="append", default=[], metavar="FIELD",
                   help="check the inductive step case by case over the values of this state "
                   "field (a bool, integer or enum), the field concrete in each case: a step "
                   "that reads a table at that field then reads "
                   "numbers; repeatable")
    p.add_argument("--exact-reals", action="store_true",
                   help="decide each `exists real` exactly in the inductive step (primal or "
                   "Farkas dual) instead of as an uninterpreted predicate of what it reads: "
                   "proves what depends on the statics themselves, at a far higher cost")
    p.add_argument("--opaque-fix", action="store_true",
                   help="in the inductive step, read each expression that computes a `fix` "
                   "(a flood) over symbolic values as uninterpreted functions of what it reads: "
                   "a step that floods a large board then builds, and proves what does not "
                   "depend on the floods (the rest is left to bounded model checking)")
    p.add_argument("--region-facts", action="store_true",
                   help="in the inductive step, read component(seed, ok) and components(ok) "
                   "as unknowns with the facts of connected regions (a component is an "
                   "equivalence class of one size; adding or taking out one square changes "
                   "the components around it only), instantiated where two sets differ by "
                   "one square (each conjunct tried first from the facts about its own "
                   "squares and those around the change), and a max or min of more than 8 "
                   "symbolic values as one unknown with its defining facts; other fixpoints "
                   "as with --opaque-fix")
    p.add_argument("--symmetry", action="store_true",
                   help="in the inductive step, prove only the first path of each orbit under "
                   "the board's symmetries (mirrors and turns of the grid); each other path "
                   "is settled when z3 shows it follows from that one mirrored, and proved "
                   "itself otherwise; where the spec declares `rotate`, the paths of each "
                   "other player to move likewise from the first player's, the players "
                   "numbered anew: the verdicts are the same, only the time changes")
    p.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                   help="check the inductive step's paths in N processes at once (default 1); "
                   "the verdicts are the same, only the time changes")
    p.add_argument("--journal", metavar="FILE",
                   help="record in FILE each action path of the inductive step once checked "
                   "(the invariants' and the transition properties'), and skip the paths a "
                   "previous run with the same spec, parameters, options and z3 version "
                   "recorded there: a proof stopped part-way resumes where it stopped")
    _long_args(p)

    p = sub.add_parser("examples", help="check the rulebook's worked examples",
                       description="Run the spec's examples: for each, 'confirmed' or "
                       "'contradicted', with the value the rules compute beside the book's.  "
                       "Exit 1 when any example is contradicted.")
    _game_args(p, players=False)
    p.add_argument("--example", help="only this example")
    _long_args(p)

    p = sub.add_parser("ambiguities", help="find where two readings of a rule disagree",
                       description="For each ambiguous rule (a `reading`) and each pair of its "
                       "options, find a smallest state (fewest elements) and a move where the "
                       "readings disagree, print it and draw it as SVG.  The search starts on "
                       "the smallest sizes the spec declares (the lowest value of each `param` "
                       "that sets how large a state is: a board's width, the number of "
                       "players) and goes up one step at a time toward the game's own, until "
                       "a witness is found; it is then shown on the game's own parameters "
                       "where it carries over (replayed there), and each witness is printed as "
                       "soon as it is found.  --param and --players pin a size instead.  With "
                       "--json, one JSON list at the end, a pair not decided when the command "
                       "was stopped saying \"stopped\" and the parameters it was searching.")
    _game_args(p)
    p.add_argument("--reading", help="only this reading")
    p.add_argument("--svg-dir", metavar="DIR", help="write one SVG per disagreement here")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="z3 time limit of each query, seconds (%(default)s)")
    p.add_argument("--invariants", action="store_true",
                   help="search only states where every invariant of the spec holds (no "
                   "piece missing from the box, none the rules forbid): a witness the rules "
                   "can reach; without it a smallest state may leave pieces out")
    _long_args(p)

    p = sub.add_parser("play", help="seeded random playouts and statistics",
                       description="Play whole games with uniformly random players (chance "
                       "weighted as the spec says); the same seed gives the same games.")
    _game_args(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--trace", action="store_true", help="print every move of the first game")
    _long_args(p)

    p = sub.add_parser("serve", help="the explorer in a browser: play, compare readings, puzzles",
                       description="Serve the explorer on http://HOST:PORT/: play a game move by "
                       "move with every refused move and its rule, compare two readings on one "
                       "state (each stored witness opens there), step through a puzzle's "
                       "answer.  Stop it with Ctrl-C.",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (this machine only by default)")
    p.add_argument("--port", type=int, default=8000, help="the port to listen on")

    p = sub.add_parser("docs", help="build the documentation site (Sphinx)",
                       description="Build the Sphinx site of docs/ (game pages generated from "
                       "spec/) with warnings as errors.  Needs the docs extra "
                       "(pip install -e '.[docs]') and a checkout (docs/ is not installed).")
    p.add_argument("--out", default="docs/_build/html", metavar="DIR", help="output directory")

    sub.add_parser("lsp", help="the language server for editors (errors, hover, navigation)",
                   description="Run the language server of the rules language on stdin and "
                   "stdout, for an editor (docs/editors.md): errors as you type, hover, go to "
                   "definition, references, outline, completion and rename in .rules files.")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.command is None:
        ap.print_help()
        return 0
    try:
        return COMMANDS[args.command](args)
    except RulebookError as e:
        _clear_status_line()
        print(f"rulebook: {e.headline()}", file=sys.stderr)
        ctx = e.context()
        if ctx:
            print(ctx, file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `rulebook ... | head`
        return 0
    except KeyboardInterrupt:
        _clear_status_line()
        print("rulebook: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:
        if not _out_of_memory(e):
            raise
        print(f"rulebook {args.command}: out of memory; try smaller game parameters "
              f"(--param, e.g. a smaller board) where the command takes them", file=sys.stderr)
        return EXIT_OUT_OF_MEMORY


def _clear_status_line() -> None:
    """Take a progress line off the terminal before an error is printed."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")


def _out_of_memory(e: BaseException) -> bool:
    """Python's MemoryError, or z3's (a Z3Exception whose value says so)."""
    if isinstance(e, MemoryError):
        return True
    value = getattr(e, "value", None)
    if type(e).__name__ == "Z3Exception" and isinstance(value, (bytes, str)):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        return "out of memory" in text
    return False


def _params(args) -> tuple:
    out = dict(_named_params(getattr(args, "param", []) or []))
    if getattr(args, "players", None) is not None:
        out["players"] = args.players
    return tuple(sorted(out.items()))


def _named_params(items: list[str]) -> list[tuple[str, int]]:
    out = []
    for it in items:
        name, eq, val = it.partition("=")
        try:
            out.append((name.strip(), int(val)))
        except ValueError:
            raise InputError(f"--param {it}: expected NAME=N (a whole number)") from None
        if not eq or not name.strip():
            raise InputError(f"--param {it}: expected NAME=N")
    return out


def _seconds(text: str) -> float:
    """argparse type of --time-limit: a positive number of seconds."""
    try:
        x = float(text)
    except ValueError:
        x = -1.0
    if not x > 0 or x == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return x


def _reporter(args):
    """The progress printer the command's flags ask for (`Progress`), or None."""
    from .progress import Progress
    on = args.progress if getattr(args, "progress", None) is not None \
        else sys.stderr.isatty() and not getattr(args, "json", False)
    return Progress() if on else None


def _say_stopped(say, stop) -> None:
    """Tell the user the command was stopped (the lines that follow say what it covers)."""
    from ..lang.errors import stop_reason
    if say is not None:
        say.clear()
    print(f"rulebook: stopped ({stop_reason(stop)}); what was found so far follows",
          file=sys.stderr, flush=True)


def _reason(stop) -> str:
    from ..lang.errors import stop_reason
    return stop_reason(stop)


def _stopped_status(stop, status: int = 0) -> int:
    """The exit status of a run stopped by ``stop`` (None: not stopped) whose partial answer
    alone would give ``status``: a failure found (1) stays; else 4 for the time limit, 130
    for Ctrl-C."""
    from ..lang.errors import TimeUp
    if stop is None or status == 1:
        return status
    return EXIT_STOPPED if isinstance(stop, TimeUp) else EXIT_INTERRUPTED


def _jobs(text: str) -> int:
    """argparse type of --jobs: a whole number of processes, at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes (1 or more), got {text!r}")
    return n


def _load(args):
    from ..engine.game import load_game
    return load_game(args.game, tuple(args.variant), _params(args))


def _emit(obj, as_json: bool, text: str) -> None:
    if as_json:
        print(json.dumps(obj, ensure_ascii=False))
    else:
        print(text)


# ---- commands ---------------------------------------------------------------------------

def cmd_check(args) -> int:
    from ..queries.examples import run_examples
    from ..engine.game import load_game
    from ..lang.resources import spec_dir
    if args.game and args.game.endswith(".rules"):
        from ..queries.examples import run_example
        from ..engine.game import load_path
        g = load_path(args.game, tuple(v for v in args.variant if ":" in v))
        results = []
        for ex in g.p.examples:
            own = dict(ex.readings)
            vs = tuple(v for v in args.variant if ":" in v and v.partition(":")[0] not in own)
            eg = load_path(args.game, vs + tuple(f"{r}:{o}" for r, o in ex.readings),
                           tuple(sorted(ex.params))) if ex.params or ex.readings else g
            results.append(run_example(eg, next(e for e in eg.p.examples if e.name == ex.name)))
        bad = [r.name for r in results if not r.confirmed]
        _emit({"file": args.game, "ok": True, "examples": len(results), "contradicted": bad},
              args.json, f"{args.game}: ok ({len(results)} examples"
              + (f"; CONTRADICTED: {', '.join(bad)})" if bad else ", all confirmed)"))
        return EXIT_CONTRADICTED if bad else 0
    names = [args.game] if args.game else sorted(
        p.stem for p in spec_dir().glob("*.rules") if _is_base(p))
    report = []
    status = 0
    for name in names:
        t0 = time.perf_counter()
        g = load_game(name, tuple(args.variant))
        dt = time.perf_counter() - t0
        exs = run_examples(name, tuple(args.variant))
        bad = [e.name for e in exs if not e.confirmed]
        if bad:
            status = EXIT_CONTRADICTED
        report.append({"game": name, "files": list(g.p.files), "compile_ms": round(dt * 1000, 1),
                       "actions": [a.name for a in g.p.actions],
                       "invariants": [i.name for i in g.p.invariants],
                       "readings": {r.name: r.chosen for r in g.p.readings},
                       "examples": len(exs), "contradicted": bad})
    lines = []
    for r in report:
        lines.append(f"{r['game']}: ok ({', '.join(r['files'])}; {len(r['actions'])} actions, "
                     f"{len(r['invariants'])} invariants, {len(r['readings'])} readings, "
                     f"{r['examples']} examples"
                     + (f"; CONTRADICTED: {', '.join(r['contradicted'])}" if r["contradicted"]
                        else ", all confirmed") + ")")
    _emit(report if len(report) != 1 else report[0], args.json, "\n".join(lines))
    return status


def _is_base(path: Path) -> bool:
    from ..lang.sources import read_source
    try:
        return read_source(path).base is None
    except RulebookError:
        return True


def cmd_moves(args) -> int:
    from ..lang.codec import from_json
    from ..render.render import render_text
    g = _load(args)
    st = g.initial()
    if args.state:
        data, text = _read_json(args.state)
        with _located_in(args.state, text):
            if not isinstance(data, dict):
                raise InputError(f"{args.state}: a state is a JSON object of fields")
            st = list(st)
            for k, v in data.items():
                if k not in g.field_index:
                    raise InputError(f"{args.state}.{k}: not a state field of {g.name}")
                i = g.field_index[k]
                st[i] = from_json(g.p.state[i].type, v, f"{args.state}.{k}")
            st = tuple(st)
    moves = g.moves(st)
    out = []
    for m, st2, shows, refused in moves:
        if refused is None:
            out.append({"move": m.to_json(g), "legal": True})
        elif args.all:
            out.append({"move": m.to_json(g), "legal": False, "rule": refused.rule,
                        "why": refused.message})
    if args.json:
        print(json.dumps({"actor": g.actor(st), "terminal": g.is_terminal(st), "moves": out}))
        return 0
    print(render_text(g, st))
    print()
    legal = [m for m in out if m["legal"]]
    print(f"{len(legal)} legal move(s)" + (f" (actor: player {g.actor(st)})"
                                           if g.actor(st) is not None else ""))
    for m in out:
        label = json.dumps(m["move"])
        if m["legal"]:
            print(f"  legal    {label}")
        else:
            print(f"  illegal  {label}  [{m['rule']}] {m['why']}")
    return 0


def cmd_solve(args) -> int:
    from ..lang.errors import stop_reason
    from ..queries.puzzles import DEFAULT_BACKEND, solve
    from .progress import time_limit
    data, text = _read_json(args.file)
    backend = args.backend or DEFAULT_BACKEND
    many = isinstance(data, list)
    items = data if many else [data]
    answers = []
    say = _reporter(args)
    stop = None
    try:
        with time_limit(args.time_limit):
            for i, obj in enumerate(items):
                where = f"{args.file}[{i}]" if many else args.file
                if say is not None and many:
                    say("puzzles solved", done=i, total=len(items))
                with _located_in(args.file, text):
                    answers.append(solve(obj, backend, int(args.timeout * 1000), where, say))
    except KeyboardInterrupt as e:
        stop = e
        answers += [{"stopped": stop_reason(e)}] * (len(items) - len(answers))
        _say_stopped(say, e)
    if say is not None:
        say.clear()
    if stop is not None:
        result = answers if many else answers[0]
        print(json.dumps(result, ensure_ascii=False, indent=None if args.json else 2))
        return _stopped_status(stop)
    if args.svg:
        from ..queries.puzzles import prepare
        from ..render.render import render_svg
        prep = prepare(items[0], f"{args.file}[0]" if many else args.file)
        q = prep.puzzle.queries[0]
        from ..queries.puzzles import solution_state
        st, marks, n = solution_state(prep, q, answers[0])
        title = f"{args.file}: start" if n == 0 else \
            f"{args.file}: after the first solution ({n} move{'s' if n > 1 else ''})"
        Path(args.svg).write_text(render_svg(prep.game, st, title=title, marks=marks),
                                  encoding="utf-8")
    result = answers if many else answers[0]
    print(json.dumps(result, ensure_ascii=False, indent=None if args.json else 2))
    return 0


def cmd_prove(args) -> int:
    from ..prover.options import ProveOptions
    from ..prover.prove import prove
    from .progress import time_limit
    g = _load(args)
    t0 = time.perf_counter()
    only = tuple(args.invariant) if args.invariant else None
    options = ProveOptions(
        bmc_depth=args.depth, timeout_ms=int(args.timeout * 1000), only=only,
        step_timeout_ms=int(args.step_timeout * 1000), split_lengths=args.split_lengths,
        exact_reals=args.exact_reals, split_on=tuple(args.split_on), jobs=args.jobs,
        journal=args.journal, opaque_fix=args.opaque_fix, alone=args.alone,
        region_facts=args.region_facts, symmetric=args.symmetry,
        time_limit_s=args.time_limit, keep_partial=True)
    say = _reporter(args)
    with time_limit(args.time_limit):
        res = prove(g, options, say)
    if say is not None:
        say.clear()
    stopped = next((r.stopped for r in res if r.stopped), "")
    scope = f"{g.name}" + "".join(f" {k}={v}" for k, v in g.p.param_values.items()) \
        + f", depth {args.depth}"
    if args.json:
        print(json.dumps({"game": g.name, "params": g.p.param_values, "depth": args.depth,
                          "seconds": round(time.perf_counter() - t0, 2),
                          **({"stopped": stopped} if stopped else {}),
                          "results": [r.as_json() for r in res]}))
    else:
        if stopped:
            print(f"stopped ({stopped}); what was established on {scope}:")
        for r in res:
            print(f"{r.name}: {r.headline()}" + (f" — {r.detail}" if r.detail else ""))
            if r.trace:
                print(f"    trace: {' '.join(json.dumps(m) for m in r.trace)}")
        print(f"({time.perf_counter() - t0:.1f} s; {scope})")
    status = 1 if any(r.status == "refuted" for r in res) else 0
    if stopped and status == 0:
        return EXIT_STOPPED if stopped.startswith("time limit") else EXIT_INTERRUPTED
    return status


def cmd_examples(args) -> int:
    from ..queries.examples import each_example
    from .progress import time_limit
    say = _reporter(args)
    res, stop = [], None
    try:
        with time_limit(args.time_limit):
            for r in each_example(args.game, tuple(args.variant), args.example, say):
                res.append(r)
    except KeyboardInterrupt as e:
        stop = e
        _say_stopped(say, e)
    if say is not None:
        say.clear()
    if args.example and not res and stop is None:
        raise InputError(f"{args.game} has no example named {args.example!r}")
    if args.json:
        print(json.dumps([r.as_json() for r in res], ensure_ascii=False))
    else:
        for r in res:
            print(f"{r.name}: {'confirmed' if r.confirmed else 'CONTRADICTED'}"
                  + (f"  [{r.ref}]" if r.ref else ""))
            for o in r.outcomes:
                mark = "ok " if o.ok else "NO "
                print(f"   {mark} {o.text}   computed {json.dumps(o.computed)}, "
                      f"book {json.dumps(o.book)}")
        if stop is not None:
            print(f"stopped after {len(res)} example(s); the others were not checked")
    status = 0 if all(r.confirmed for r in res) else EXIT_CONTRADICTED
    return _stopped_status(stop, status)


def cmd_ambiguities(args) -> int:
    from ..lang.errors import TimeUp, stop_reason
    from ..queries.ascent import Climb, ambiguities, scope
    from ..queries.readings import reading_pairs
    from ..render.witness import witness_svg, witness_text
    from .progress import time_limit
    g = _load(args)
    say = _reporter(args)
    pinned = {name for name, _ in _params(args)}
    where = Climb()
    found, stop = [], None
    d = Path(args.svg_dir) if args.svg_dir else None
    deadline = time.monotonic() + args.time_limit if args.time_limit else None
    try:
        with time_limit(args.time_limit):
            for r in ambiguities(g, args.reading, int(args.timeout * 1000), say,
                                 args.invariants, pinned, deadline, where):
                found.append(r)
                if d is not None and witness_svg(r):
                    d.mkdir(parents=True, exist_ok=True)
                    (d / f"{g.name}-{r.reading}-{r.a}-{r.b}.svg").write_text(
                        witness_svg(r), encoding="utf-8")
                if not args.json:
                    if say is not None:
                        say.clear()
                    print(witness_text(r) + "\n", flush=True)
    except KeyboardInterrupt as e:
        # The search's own deadline raises a TimeUp that does not know the limit.
        stop = TimeUp(args.time_limit) if isinstance(e, TimeUp) else e
    if say is not None:
        say.clear()
    left = reading_pairs(g, args.reading)[len(found):]
    undecided = []
    if stop is not None:
        _say_stopped(None, stop)
        for i, (rd, a, b) in enumerate(left):
            here = i == 0 and where.params is not None and where.pair == (rd.name, a, b)
            undecided.append({"reading": rd.name, "a": a, "b": b, "found": None,
                              "stopped": stop_reason(stop),
                              "searching": where.params if here else None,
                              "tried": list(where.tried) if here else []})
    if args.json:
        print(json.dumps([r.as_json() for r in found] + undecided, ensure_ascii=False))
    elif stop is not None:
        print(f"stopped ({stop_reason(stop)}) after {len(found)} of {len(found) + len(left)} "
              f"pairs of readings; not decided:")
        for u in undecided:
            print(f"  {u['reading']}: {u['a']} vs {u['b']}"
                  + (f" (was searching on {scope(u['searching'])}" if u["searching"] else "")
                  + (f"; no witness on {'; '.join(scope(t) for t in u['tried'])}"
                     if u["tried"] else "") + (")" if u["searching"] else ""))
    return _stopped_status(stop)


def cmd_play(args) -> int:
    g = _load(args)
    rng = random.Random(args.seed)
    score = g.expr("score(p)", {"p": g.p.types["Player"]})[0] if g.has_def("score") else None
    win = g.expr("winner(p)", {"p": g.p.types["Player"]})[0] if g.has_def("winner") else None
    players = list(range(g.p.param_values.get("players", 0)))
    games = []
    t0 = time.perf_counter()
    say = _reporter(args)
    stop = None
    from .progress import time_limit
    try:
        with time_limit(args.time_limit):
            for i in range(args.games):
                if say is not None and args.games > 1:
                    say("games played", done=i, total=args.games)
                if args.trace and i == 0:
                    st, n, moves = _traced_playout(g, rng)
                    for k, m in enumerate(moves, 1):
                        print(f"{k:5d}  {json.dumps(m)}",
                              file=sys.stderr if args.json else sys.stdout)
                else:
                    st, n = g.playout(rng)
                games.append({"moves": n,
                              "scores": [score(st, p) for p in players] if score else None,
                              "winners": [p for p in players if win(st, p)] if win else None})
    except KeyboardInterrupt as e:
        stop = e
        _say_stopped(say, e)
    if say is not None:
        say.clear()
    dt = max(time.perf_counter() - t0, 1e-9)
    summary = {"game": g.name, "players": len(players), "seed": args.seed, "games": games,
               "seconds": round(dt, 3), "games_per_second": round(len(games) / dt, 1),
               **({"stopped": _reason(stop), "asked": args.games} if stop else {})}
    if args.json:
        print(json.dumps(summary))
        return _stopped_status(stop)
    if stop is not None:
        print(f"stopped ({_reason(stop)}) after {len(games)} of {args.games} games; "
              f"the figures below are of those {len(games)}")
    if not games:
        return _stopped_status(stop)
    for i, gm in enumerate(games):
        print(f"game {i + 1}: {gm['moves']} moves; scores {gm['scores']}; "
              f"winner(s) {gm['winners']}")
    if len(games) > 1:
        wins = [sum(p in gm["winners"] for gm in games) for p in players]
        mean = [round(sum(gm["scores"][p] for gm in games) / len(games), 1) for p in players]
        print(f"wins per player {wins}; mean scores {mean}")
    print(f"({len(games)} game(s) in {dt:.2f} s, {len(games) / dt:.1f} games/s)")
    return _stopped_status(stop)


def _traced_playout(g, rng):
    st = g.initial()
    chance = [a for a in g.actions if a.chance]
    player = [a for a in g.actions if not a.chance]
    moves = []
    while not g.is_terminal(st):
        picked = g.pick(st, rng, chance, True) or g.pick(st, rng, player, False)
        if picked is None:
            raise RulebookError("no legal move in a state that is not terminal")
        m, st = picked
        moves.append(m.to_json(g))
    return st, len(moves), moves


def _read_json(path: str):
    """The JSON document at ``path`` ("-": stdin) and its text (to locate later errors in)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    try:
        return json.loads(text), text
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None


@contextlib.contextmanager
def _located_in(path: str, text: str):
    """An input error about a value of the document at ``path`` gets its line and column."""
    from ..lang.jsonpos import locate
    try:
        yield
    except InputError as e:
        raise locate(e, path, text) from None


COMMANDS = {
    "check": cmd_check, "moves": cmd_moves, "solve": cmd_solve, "prove": cmd_prove,
    "examples": cmd_examples, "ambiguities": cmd_ambiguities, "play": cmd_play,
}


def cmd_docs(args) -> int:
    from ..lang.resources import REPO
    src = REPO / "docs"
    if not (src / "conf.py").is_file():
        raise InputError(f"{src}: no docs/conf.py here (the docs build needs a checkout)")
    try:
        from sphinx.cmd.build import build_main
    except ImportError:
        raise InputError("Sphinx is not installed: pip install -e '.[docs]'") from None
    return build_main(["-W", "--keep-going", "-q", "-b", "html", str(src), args.out])


COMMANDS["docs"] = cmd_docs


def cmd_lsp(args) -> int:
    from ..lsp.server import serve
    serve()
    return 0


COMMANDS["lsp"] = cmd_lsp


def cmd_serve(args) -> int:
    from ..web import serve
    serve(args.host, args.port)
    return 0


COMMANDS["serve"] = cmd_serve
