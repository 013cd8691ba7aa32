"""The `rulebook` command line: check, moves, solve, prove, examples, ambiguities, play."""
from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import sys
import textwrap
import time
from pathlib import Path

from ..lang.errors import EvalError, InputError, RulebookError
from . import parser
from .parser import cores, picks_tactics, printable

EXIT_BAD_INPUT = 2
EXIT_CONTRADICTED = 1
EXIT_OUT_OF_MEMORY = 3
EXIT_STOPPED = 4          # --time-limit ran out: the answers printed are partial
EXIT_INTERRUPTED = 130    # Ctrl-C: likewise, as a shell reports a SIGINT

# Input nested deeper than this is refused before it is read (no puzzle or state needs more
# than a few levels; Python's own readers would overflow their stack far below a million).
MAX_JSON_DEPTH = 100


def build_parser() -> argparse.ArgumentParser:
    """The parser of the `rulebook` command (`parser.build_parser`), `solve --help` closed by
    the puzzle kinds of every game found."""
    return parser.build_parser(puzzle_kinds)


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
        print(f"rulebook: {printable(e.headline())}", file=sys.stderr)
        ctx = e.context()
        if ctx:
            print(ctx, file=sys.stderr)
        return EXIT_BAD_INPUT
    except RecursionError:
        # The checker bounds how deeply rules nest, and inputs are read without recursion:
        # this is a bug, but it is still reported in one line.
        print(f"rulebook {args.command}: the input is nested too deeply for Python's recursion "
              f"limit ({sys.getrecursionlimit()})", file=sys.stderr)
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


def _in_game(game: str, e: EvalError, message: str) -> EvalError:
    """``message`` about game ``game``, at the place of the rule ``e`` stopped at when it has
    one (that names the spec's file), else prefixed with the game."""
    if e.span is not None:
        return EvalError(message, e.span, e.source)
    return EvalError(f"{game}: {message}")


def _clear_status_line() -> None:
    """Take a progress line off the terminal before an error is printed."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")


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
    """The parameters set by --param and --players, each once (a second, different value of
    one is refused)."""
    out: dict[str, tuple[int, str]] = {}
    named = _named_params(getattr(args, "param", []) or [])
    if getattr(args, "players", None) is not None:
        named.append(("players", args.players, f"--players {args.players}"))
    for name, value, text in named:
        if name in out and out[name][0] != value:
            raise InputError(f"{text}: parameter {name} is already set by {out[name][1]}")
        out[name] = (value, text)
    return tuple(sorted((name, v) for name, (v, _) in out.items()))


def _named_params(items: list[str]) -> list[tuple[str, int, str]]:
    out = []
    for it in items:
        name, eq, val = it.partition("=")
        if not eq or not name.strip():
            raise InputError(f"--param {it}: expected NAME=N")
        try:
            out.append((name.strip(), int(val), f"--param {it}"))
        except ValueError:
            raise InputError(f"--param {it}: expected NAME=N (a whole number)") from None
    return out


def _load(args):
    from ..engine.game import load_game
    return load_game(args.game, tuple(args.variant), _params(args))


def _emit(obj, as_json: bool, text: str) -> None:
    if as_json:
        print(json.dumps(obj, ensure_ascii=False))
    else:
        print(text)


def cmd_check(args) -> int:
    from ..queries.examples import run_examples
    from ..engine.game import load_game
    from ..lang.resources import spec_dir
    from .progress import time_limit
    names = [args.game] if args.game else sorted(
        p.stem for p in spec_dir().glob("*.rules") if _is_base(p))
    report = []
    say = _reporter(args)
    stop = None
    try:
        with time_limit(args.time_limit):
            for name in names:
                if say is not None:
                    say("games checked", done=len(report), total=len(names), note=name)
                t0 = time.perf_counter()
                g = load_game(name, tuple(args.variant))
                dt = time.perf_counter() - t0
                exs = run_examples(name, tuple(args.variant))
                bad = [e.name for e in exs if not e.confirmed]
                report.append({"game": name, "files": list(g.p.files),
                               "compile_ms": round(dt * 1000, 1),
                               "actions": [a.name for a in g.p.actions],
                               "invariants": [i.name for i in g.p.invariants],
                               "readings": {r.name: r.chosen for r in g.p.readings},
                               "examples": len(exs), "contradicted": bad})
    except KeyboardInterrupt as e:
        stop = e
        _say_stopped(say, e)
    if say is not None:
        say.clear()
    if stop is not None:
        left = names[len(report):]
        if args.json:
            print(json.dumps({"checked": report, "stopped": _reason(stop), "not_checked": left}))
            return _stopped_status(stop)
    lines = []
    for r in report:
        name = r["game"]
        n, bad = r["examples"], r["contradicted"]
        verdicts = (f"{n - len(bad)} confirmed, {len(bad)} contradicted" if bad
                    else "all confirmed")
        lines.append(f"{name}: ok ({', '.join(r['files'])}; {len(r['actions'])} actions, "
                     f"{len(r['invariants'])} invariants, {len(r['readings'])} readings, "
                     f"{n} examples, {verdicts})")
        if bad:
            lines.append(f"  the rules contradict the book's worked example"
                         f"{'s' if len(bad) > 1 else ''} {', '.join(bad)} (`rulebook examples "
                         f"{name}` shows both values): a finding about the book, not a fault "
                         f"of the spec")
    if stop is not None:
        lines.append(f"stopped ({_reason(stop)}) after {len(report)} of {len(names)} games; "
                     f"not checked: {', '.join(left)}")
        print("\n".join(lines))
        return _stopped_status(stop)
    _emit(report if len(report) != 1 else report[0], args.json, "\n".join(lines))
    return 0


def _is_base(path: Path) -> bool:
    """Whether a spec file is a game of its own (not an expansion of another)."""
    from ..lang.sources import header_of
    head = header_of(path)
    return head is None or head[1] is None


def cmd_moves(args) -> int:
    from ..render.render import render_text
    g = _load(args)
    st = g.initial()
    if args.state:
        data, text = _read_json(args.state)
        with _located_in(args.state, text):
            st = g.state_from_json(data, args.state)
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
    if args.svg:
        _writable(args.svg)     # before solving: a bad --svg must not cost the answer
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
        stop = getattr(e, "stop", e)
        if getattr(e, "answer", None) is not None:
            answers.append(e.answer)    # an exhaustive search's answers found so far
        answers += [{"stopped": stop_reason(stop)}] * (len(items) - len(answers))
        _say_stopped(say, stop)
    if say is not None:
        say.clear()
    result = answers if many else answers[0]
    print(json.dumps(result, ensure_ascii=False, indent=None if args.json else 2), flush=True)
    if stop is not None:
        return _stopped_status(stop)
    if args.svg and items:
        from ..queries.puzzles import chosen_values, last_move, prepare, solution_state
        from ..render.board import move_marks, move_path
        from ..render.render import render_svg
        prep = prepare(items[0], f"{args.file}[0]" if many else args.file)
        q = prep.puzzle.queries[0]
        st, marks, n = solution_state(prep, q, answers[0])
        path: list = []
        last = last_move(prep, q, answers[0]) if not marks else None
        if last is not None:
            # The last move's squares framed, and the way it went when its action says.
            mj = last[1].to_json(prep.game)
            marks, path = move_marks(prep.game, mj), move_path(prep.game, mj, last[0])
        spots = chosen_values(prep, q, answers[0])
        title = f"{args.file}: start" if n == 0 else \
            f"{args.file}: after the first solution ({n} move{'s' if n > 1 else ''})"
        if spots:
            title += f"; the {len(spots)} answer{'s' if len(spots) > 1 else ''} framed"
        _write(args.svg, render_svg(prep.game, st, title=title, marks=marks, spots=spots,
                                    path=path))
    return 0


def _writable(path: str) -> None:
    """Refuse an output file that cannot be written: in a missing folder, or a folder."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path}: cannot write (a directory)")
    parent = p.parent
    if not parent.is_dir():
        raise InputError(f"{path}: cannot write (no folder {parent})")


def _write(path: str, text: str) -> None:
    from ..lang.sources import reason
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot write ({reason(e)})") from None


def _workers(args) -> int:
    """--workers, by default the machine's cores (`prove`, `play` and `ambiguities`)."""
    return cores() if args.workers is None else args.workers


def cmd_prove(args) -> int:
    # The Dask engine of --cluster or of more than one worker, by default the machine's cores
    # (else the step in this process); a scheduler that does not answer is said before any work.
    engine = None
    workers = _workers(args)
    if args.cluster is not None or workers > 1:
        from ..prover import cluster
        engine = cluster.engine(cluster.Recipe.of(args.game, tuple(args.variant),
                                                  _params(args)), workers, args.cluster)
    try:
        return _prove_with(args, engine)
    finally:
        if engine is not None:
            engine.close()


def _prove_with(args, engine) -> int:
    from ..prover.options import ProveOptions
    from ..prover.prove import prove
    from ..prover.result import Tally
    from ..prover.store import prepare_file
    from . import seeding
    from .progress import time_limit
    g = _load(args)
    t0 = time.perf_counter()
    only = tuple(args.invariant) if args.invariant else None
    # No tactic flag: the prover picks its tactics (`prover.tactics`).
    auto = picks_tactics(args)
    step_timeout = 5.0 if args.step_timeout is None else args.step_timeout
    options = ProveOptions(
        bmc_depth=args.depth, timeout_ms=int(args.timeout * 1000), only=only, auto=auto,
        step_timeout_ms=int(step_timeout * 1000), split_lengths=args.split_lengths,
        exact_reals=args.exact_reals, split_on=tuple(args.split_on),
        journal=args.journal, store=seeding.store_path(args), opaque_fix=args.opaque_fix,
        alone=args.alone, region_facts=args.region_facts, symmetric=args.symmetry,
        fix_budget_ms=None if args.fix_budget is None else int(args.fix_budget * 1000),
        time_limit_s=args.time_limit, keep_partial=True)
    if options.store is not None and options.journal is None:
        # A file that is no store is moved aside (said on stderr, even with --json), and a
        # path where none can be made is refused, before any work.
        said = prepare_file(options.store)
        if said:
            print(f"rulebook: {said}", file=sys.stderr, flush=True)
    say = _reporter(args)
    if args.import_journal:
        if options.store is None:
            raise InputError("--import-journal: needs the proof store (not with --no-store "
                             "or --journal)")
        return seeding.import_journal(args, g, options, say)
    tally = Tally()
    with time_limit(args.time_limit):
        # The stored proofs name the game as the command does (an expansion by its own name,
        # while the game loaded is its base's).
        res = prove(g, options, say, tally, seeding.seeds(args.game), engine)
    if say is not None:
        say.clear()
    stopped = next((r.stopped for r in res if r.stopped), "")
    scope = f"{g.name}" + "".join(f" {k}={v}" for k, v in g.p.param_values.items()) \
        + f", depth {args.depth}"
    if args.json:
        print(json.dumps({"game": g.name, "params": g.p.param_values, "depth": args.depth,
                          "seconds": round(time.perf_counter() - t0, 2),
                          **({"stopped": stopped} if stopped else {}),
                          "paths": tally.paths_json(),
                          **({"passes": list(tally.passes)} if tally.passes else {}),
                          "store": options.store if options.journal is None else None,
                          "results": [r.as_json() for r in res]}))
    else:
        if stopped:
            print(f"stopped ({stopped}); what was established on {scope}:")
        for r in res:
            print(f"{r.name}: {r.headline()}" + (f" — {r.detail}" if r.detail else ""))
            if r.trace:
                print(f"    trace: {' '.join(json.dumps(m) for m in r.trace)}")
        where = "the journal" if options.journal is not None else "the store"
        print(f"paths: {tally.paths} in all, {tally.reused} reused from {where}, "
              f"{tally.checked} checked" + (f", then stopped ({stopped})" if stopped else ""))
        if tally.passes:
            print(f"tactics: {'; then '.join(tally.passes)}")
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
    # The Dask workers of --cluster or --workers N over 1, reached before any work.
    from ..engine.workpool import pool
    workers = pool(_workers(args), args.cluster)
    try:
        return _ambiguities_with(args, workers)
    finally:
        if workers is not None:
            workers.close()


def _ambiguities_with(args, pool) -> int:
    from ..engine.workpool import Recipe
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
                                 args.invariants, pinned, deadline, where, pool,
                                 Recipe.of(args.game, tuple(args.variant), _params(args))):
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
    # The Dask workers of --cluster or --workers N over 1 (else every game in this process);
    # a scheduler that does not answer is said before any work.
    from ..engine.workpool import pool
    workers = pool(_workers(args), args.cluster)
    try:
        return _play_with(args, workers)
    finally:
        if workers is not None:
            workers.close()


def _play_with(args, pool) -> int:
    from ..engine.workpool import Recipe
    from ..queries.playstats import Player, game_rng, outcomes
    from .playreport import report
    from .progress import time_limit
    g = _load(args)
    base = Player(g)
    # Under --compare, every other option of the reading plays the same seeds.
    others = _compared(args, g)
    recipes = [Recipe.of(args.game, tuple(args.variant), _params(args))] + \
        [Recipe.of(args.game, variants, _params(args)) for _, _, variants in others]
    games: list = []
    trace = None
    under: dict = {opt: [] for opt, _, _ in others}
    t0 = time.perf_counter()
    say = _reporter(args)
    stop = None
    try:
        with time_limit(args.time_limit):
            first = 0
            if args.trace:
                try:
                    st, n, trace = traced_playout(g, game_rng(args.seed, 0))
                    more = [pl.play(args.seed, 0) for _, pl, _ in others]
                except EvalError as e:      # a dead end of the rules: say which game
                    raise _in_game(args.game, e, f"game 1 of seed {args.seed}: "
                                                 f"{e.message}") from None
                if not args.json:    # under --json the moves are in the document
                    for k, m in enumerate(trace, 1):
                        print(f"{k:5d}  {json.dumps(m)}")
                _keep(games, under, others, (base.outcome(st, n), *more))
                first = 1
            try:
                for _, played in outcomes([base] + [pl for _, pl, _ in others], args.seed,
                                          range(first, args.games), pool, tuple(recipes),
                                          say if args.games > 1 else None, args.games,
                                          f"each under {len(others) + 1} options" if others
                                          else ""):
                    _keep(games, under, others, played)
            except EvalError as e:
                raise _in_game(args.game, e, e.message) from None
    except KeyboardInterrupt as e:
        stop = e
        _say_stopped(say, e)
    if say is not None:
        say.clear()
    dt = max(time.perf_counter() - t0, 1e-9)
    report(args, g, base, games, under, dt, stop, trace)
    return _stopped_status(stop)


def _keep(games: list, under: dict, others: list, played: tuple) -> None:
    """One game's outcomes (the game's own, then under each compared option) kept."""
    games.append(played[0])
    for (opt, _, _), p in zip(others, played[1:]):
        under[opt].append(p)


def _compared(args, g) -> list:
    """(option, `Player`, the variants it is loaded with) for each option of the reading
    ``--compare`` names other than the one played (its default); [] without --compare."""
    from ..engine.game import load_game
    from ..queries.playstats import Player
    if args.compare is None:
        return []
    r = next((rd for rd in g.p.readings if rd.name == args.compare), None)
    if r is None:
        raise InputError(f"--compare {args.compare}: {g.name} has no such reading (readings: "
                         f"{', '.join(rd.name for rd in g.p.readings) or 'none'})")
    if any(v.startswith(f"{r.name}:") for v in args.variant):
        raise InputError(f"--compare {r.name} plays every option of {r.name}: give it "
                         f"without --variant {r.name}:...")
    out = []
    for opt, _ in r.options:
        if opt != r.chosen:
            variants = (*args.variant, f"{r.name}:{opt}")
            out.append((opt, Player(load_game(args.game, variants, _params(args))), variants))
    return out


def traced_playout(g, rng, max_steps: int = 100000):
    """`Game.playout` keeping the moves (the same bound on a game's length)."""
    st = g.initial()
    chance = [a for a in g.actions if a.chance]
    player = [a for a in g.actions if not a.chance]
    moves = []
    while not g.is_terminal(st):
        if len(moves) >= max_steps:
            raise EvalError(f"no end after {max_steps} moves")
        picked = g.pick(st, rng, chance, True) or g.pick(st, rng, player, False)
        if picked is None:
            raise EvalError("no legal move in a state that is not terminal "
                            f"(after {len(moves)} moves)")
        m, st = picked
        moves.append(m.to_json(g))
    return st, len(moves), moves


def _read_json(path: str):
    """The JSON document at ``path`` ("-": stdin) and its text (to locate later errors in)."""
    from ..lang.sources import reason
    try:
        if path == "-":
            raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else \
                sys.stdin.read().encode("utf-8", "surrogateescape")
        else:
            raw = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({reason(e)})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(f"{path}:{line}:{col}: not UTF-8 text (byte 0x{raw[e.start]:02x})") \
            from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        data, depth = None, None
    else:
        depth = json_depth(data)
    if depth is None or depth > MAX_JSON_DEPTH:
        levels = "too many" if depth is None else str(depth)
        raise InputError(f"{path}: JSON nested {levels} levels deep, at most {MAX_JSON_DEPTH}")
    return data, text


def json_depth(data) -> int:
    """How deeply the lists and objects of a JSON value nest (a scalar: 0), without recursion."""
    most = 0
    todo = [(data, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, (list, dict)):
            most = max(most, d)
            todo.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return most


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
    from .progress import time_limit
    # Sphinx says how far it is itself (reading, writing: "[ 40%] torres"): kept unless the
    # progress is off; it turns a Ctrl-C or the time limit into its own exit status 2.
    quiet = ["-q"] if _reporter(args) is None else []
    with time_limit(args.time_limit) as stopper:
        status = build_main(["-W", "--keep-going", *quiet, "-b", "html", str(src), args.out])
    if stopper.fired is not None:
        print(f"rulebook: stopped ({_reason(stopper.fired)}); the site in {args.out} is "
              f"incomplete", file=sys.stderr)
        return _stopped_status(stopper.fired)
    return status


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


def puzzle_kinds() -> str:
    """The closing text of `solve --help`: the puzzle kinds of every game found, read from
    their specs (the first of a game is its default)."""
    from ..lang.errors import RulebookError as Error
    from ..lang.sources import games_found, read_source, string
    lines = ["puzzle kinds (the \"ask\" key of a puzzle file; the first of a game is its "
             "default):"]
    for game, (path, base) in sorted(games_found().items()):
        try:
            tree = read_source(path).tree
        except Error:
            continue
        kinds = []
        for item in tree.children[1:]:
            decl = item.children[-1]
            if decl.data != "puzzle_decl":
                continue
            doc = item.children[0]
            text = " ".join(string(doc.children[0]).split()) if doc is not None else ""
            first = re.split(r"(?<=[.?!]) ", text, maxsplit=1)[0]
            kinds.append(textwrap.fill(f"{str(decl.children[0]).replace('_', '-')}: {first}",
                                       88, initial_indent="    ", subsequent_indent="      "))
        if kinds:
            lines.append(f"  {game}" + (f" (with {base})" if base else "") + ":")
            lines.extend(kinds)
        elif base is None:
            lines.append(f"  {game}: none")
    return "\n".join(lines)
