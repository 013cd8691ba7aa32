"""The `rulebook` command line's arguments: every option with its help in plain words and its
default, and the checks of the numbers (a depth, a time, a count) that argparse reports."""
from __future__ import annotations

import argparse
import os

DESCRIPTION = """\
rulebook: the rules of tower-building board games, written once in .rules files and turned
into a referee (which moves are legal, and which rule forbids the others), a puzzle solver,
a prover of the rules' claims, and documentation.

A GAME is a game's name (the id on the `game "..."` line of its .rules file, looked up in the
spec/ directory and in the directories listed in RULEBOOK_SPECS, `:`-separated), or the path
of a .rules file.  --variant adds an expansion (a .rules file that extends the game) or picks
one reading of an ambiguous rule, written READING:OPTION.

Long commands (prove, ambiguities, solve, examples, play) say on stderr what they are doing
and how far they are (when stderr is a terminal and not under --json, or with --progress).
Stopped by Ctrl-C or by their --time-limit, they print what they found so far and say what it
covers (the parameters, the depth, how many of the paths or games).

Exit status: 0 done; 1 the answer is "no" (an invariant refuted, a worked example of the book
contradicted by `examples`); 2 bad input (a bad file, option or value: one line saying what
and where, as FILE:LINE:COL when there is one); 3 out of memory; 4 stopped by --time-limit;
130 interrupted (Ctrl-C).  A partial answer that is already a "no" exits 1."""


def printable(text: str) -> str:
    """``text`` on one line: a character that is not printable (a line break, U+0085, a
    control character read from an input file or an argument) written as its escape."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


class HelpParser(argparse.ArgumentParser):
    """An argument parser whose closing text (``epilog_from``, a function) is computed only
    when its help is shown: the puzzle kinds of `solve` are read from every spec file."""

    def __init__(self, *args, epilog_from=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.epilog_from = epilog_from

    def error(self, message: str):
        """A bad command line: one line saying what, and where to read more (exit 2)."""
        self.exit(2, f"{self.prog}: {printable(message)} (see {self.prog} --help)\n")

    def format_help(self) -> str:
        if self.epilog_from is not None and self.epilog is None:
            self.epilog = self.epilog_from()
        return super().format_help()


def cores() -> int:
    """The cores this process may run on (at most 64, the local workers' limit): the default
    number of workers of `prove`, `play` and `ambiguities`."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 64))


def count(least: int, what: str):
    """An argparse type: a whole number at least ``least``."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = None
        if n is None or n < least:
            raise argparse.ArgumentTypeError(f"expected {what} ({least} or more), got {text!r}")
        return n
    return parse


def seconds(text: str) -> float:
    """An argparse type: a time limit, a positive number of seconds."""
    try:
        t = float(text)
    except ValueError:
        t = float("nan")
    if not t > 0 or t == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return t


def _game_args(p: argparse.ArgumentParser, players: bool = True, params: bool = True) -> None:
    p.add_argument("game", metavar="GAME",
                   help="the game: its name (e.g. les-5-tours) or the path of its .rules file")
    p.add_argument("--variant", action="append", default=[], metavar="NAME",
                   help="an expansion to add (e.g. tours-de-pouvoir), or the reading of an "
                   "ambiguous rule to follow, written READING:OPTION (e.g. zero_bid:pass); "
                   "repeatable, one option per reading (default: the spec's own readings)")
    if players:
        p.add_argument("--players", type=count(1, "a number of players"), default=None,
                       metavar="N", help="the number of players (default: the spec's "
                       "`players` parameter); the same as --param players=N")
    if params:
        p.add_argument("--param", action="append", default=[], metavar="NAME=N",
                       help="set a parameter the spec declares (e.g. a smaller board: --param "
                       "w=4 --param h=4); repeatable (default: the spec's values)")
    p.add_argument("--json", action="store_true", help="print JSON, for scripts")


def _long_args(p: argparse.ArgumentParser) -> None:
    """--progress and --time-limit, for the commands that can run for minutes."""
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="say on stderr what the command is doing and how far it is: one "
                   "line kept up to date on a terminal, a line every few seconds otherwise "
                   "(default: on when stderr is a terminal, except under --json)")
    p.add_argument("--time-limit", type=seconds, default=None, metavar="SECONDS",
                   help="stop after this many seconds and print what was found so far, "
                   "with what it covers; exit status 4 (default: no limit; Ctrl-C "
                   "stops it the same way, exit status 130)")


def build_parser(puzzle_kinds=None) -> argparse.ArgumentParser:
    """The parser of the `rulebook` command; ``puzzle_kinds`` (a function giving text) closes
    `solve --help`."""
    fmt = argparse.RawDescriptionHelpFormatter
    ap = HelpParser(prog="rulebook", description=DESCRIPTION, formatter_class=fmt)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=HelpParser)

    p = sub.add_parser("check", help="parse and type-check a spec, run its examples",
                       description="Parse and type-check a game's rules (with its variants), "
                       "then run the worked examples of its rulebook.  Exit 0 when the rules "
                       "are well formed and every example runs, whether the book's answer is "
                       "confirmed or contradicted: a contradicted example is a finding about "
                       "the book, printed as such, not a fault of the spec (`rulebook "
                       "examples` exits 1 on one).  Exit 2 on an error in the rules.")
    p.add_argument("game", nargs="?", metavar="GAME",
                   help="a game's name or the path of a .rules file (default: every game "
                   "in spec/)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME",
                   help="an expansion to add, or a reading READING:OPTION; repeatable")
    p.add_argument("--json", action="store_true", help="print JSON, for scripts")
    _long_args(p)

    p = sub.add_parser("moves", help="legal moves of a state, with the rule behind each refusal",
                       description="List every move of a position: the legal ones, and with "
                       "--all each illegal one with the rule that forbids it.  The position is "
                       "the start of the game, or the one described by --state.")
    _game_args(p)
    p.add_argument("--state", metavar="FILE", help="a JSON file ('-' for standard input): an "
                   "object of the state's fields; a field left out keeps its value at the "
                   "start of the game (default: the start of the game)")
    p.add_argument("--all", action="store_true", help="also list the illegal moves, each "
                   "with the rule that forbids it")

    p = sub.add_parser("solve", help="solve puzzles (feasibility, witness, optimum)",
                       description="Answer one puzzle (a JSON object naming its game and its "
                       "kind, see docs/puzzles.md) or a JSON list of puzzles; the answers come "
                       "back as one object or a list in the same order.  Every answer is "
                       "replayed by the referee before it is shown.  A solver that runs out of "
                       "time answers \"unknown\", never \"impossible\".  Stopped by "
                       "--time-limit or Ctrl-C, it prints the answers found so far, a puzzle "
                       "not finished answering {\"stopped\": WHY}.",
                       formatter_class=fmt, epilog_from=puzzle_kinds)
    p.add_argument("file", metavar="FILE", help="a JSON puzzle file ('-' for standard input)")
    p.add_argument("--backend", choices=["search", "z3"], default="search",
                   help="search: the referee tries every move (faster on these sizes); z3: "
                   "the Z3 solver (default: %(default)s)")
    p.add_argument("--timeout", type=seconds, default=60.0, metavar="SECONDS",
                   help="time limit of each Z3 query and of the search for a puzzle's answer, "
                   "which then is \"unknown\" (a search for the best with a `bound:` adds the "
                   "best found so far, best_found, and a bound on the best, at_most) (default: "
                   "%(default)s)")
    p.add_argument("--svg", metavar="FILE", help="also draw, into FILE, the position the first "
                   "puzzle's first answer reaches (the start when there is none), the squares "
                   "it names highlighted; the folder must exist")
    p.add_argument("--json", action="store_true", help="print compact JSON on one line "
                   "(default: indented)")
    _long_args(p)

    p = sub.add_parser("prove", help="prove the spec's invariants",
                       description="Prove each invariant (a property claimed of every position "
                       "the rules can reach): 'inductive' (it holds after every move from "
                       "wherever it held, so always), else 'holds up to depth K' (checked over "
                       "every sequence of K moves from the start), or 'refuted' with the moves "
                       "that break it, replayed by the referee.  With --time-limit, the depth "
                       "check comes first, one depth at a time, then the inductive step with the "
                       "time left; stopped (the time limit or Ctrl-C), each invariant says what "
                       "was established: 'holds up to depth K' for the depths completed, else "
                       "'not decided'.  Exit 1 when one is refuted, else 4 when the time limit "
                       "stopped the proof, 130 on Ctrl-C.")
    _game_args(p)
    p.add_argument("--depth", type=count(0, "a number of moves"), default=4, metavar="K",
                   help="how many moves from the start to check an invariant that is not "
                   "proved inductive (default: %(default)s)")
    p.add_argument("--invariant", action="append", metavar="NAME",
                   help="only this invariant (repeatable); the others are still assumed while "
                   "proving it (default: every invariant)")
    p.add_argument("--timeout", type=seconds, default=300.0, metavar="SECONDS",
                   help="time limit of each Z3 query of the depth check (default: %(default)s)")
    p.add_argument("--workers", "--jobs", dest="workers",
                   type=count(1, "a number of processes"), default=None,
                   metavar="N",
                   help="check the inductive step's action paths in N worker processes at "
                   "once (a local Dask cluster, started once the proof has run 1 s: a short "
                   "proof starts none; the workers build the paths, shared out by ranges of "
                   "each action's instances); 1: all in this process, no cluster; at most 64; "
                   "the verdicts are the same, only the time changes; --jobs is the same "
                   f"option (default: this machine's cores, {cores()}; two workers gave "
                   "1.85x on a proof of 90 s on 2 cores, but a proof of seconds is faster "
                   "with 1, which starts no cluster: see docs/prover.md)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="send the inductive step's action paths to the Dask scheduler at "
                   "ADDRESS (e.g. tcp://10.0.0.5:8786; `dask scheduler` prints it), whose "
                   "workers check them; they need this rulebook and the same spec files; "
                   "instead of --workers (default: none)")
    p.add_argument("--store", metavar="FILE",
                   help="the proof store: an SQLite file that keeps the verdict of each action "
                   "path of the inductive step, keyed by the rules, invariants, parameters and "
                   "options that path reads; a re-proof checks only the paths an edit reached, "
                   "and a proof stopped part-way resumes; a file that is no store is moved "
                   "to FILE.bad-N and a fresh one started (default: "
                   "$XDG_CACHE_HOME/rulebook/proofs.sqlite, else "
                   "~/.cache/rulebook/proofs.sqlite)")
    p.add_argument("--no-store", action="store_true",
                   help="use no proof store: check every path and keep nothing")
    p.add_argument("--import-journal", metavar="FILE",
                   help="prove nothing: write the verdicts of the journal FILE (of a run with "
                   "--journal, under the same parameters and options, its spec text today's "
                   "or that of a stored proof in docs/proofs/ whose checked program is "
                   "today's) into the proof store, for the same command to reuse")
    p.add_argument("--journal", metavar="FILE",
                   help="expert: record the paths in FILE, a log of this one run (the whole "
                   "spec, parameters and options), instead of the store; a run with the same "
                   "ones skips what it recorded (default: no journal)")
    _long_args(p)
    _expert_tactics(p)

    p = sub.add_parser("examples", help="check the rulebook's worked examples",
                       description="Run the worked examples of the rulebook written in the spec: "
                       "each is 'confirmed' or 'contradicted', with the value the rules compute "
                       "beside the book's.  Exit 1 when any example is contradicted.")
    _game_args(p, players=False, params=False)
    p.add_argument("--example", metavar="NAME", help="only this example (default: all)")
    _long_args(p)

    p = sub.add_parser("ambiguities", help="find where two readings of a rule disagree",
                       description="For each ambiguous rule (a `reading`) and each pair of its "
                       "options, find a smallest position (fewest pieces) and a move where the "
                       "two readings disagree, print it and draw it as SVG.  The search starts "
                       "on the smallest sizes the spec declares (the lowest value of each "
                       "`param` that sets how large a position is: a board's width, the number "
                       "of players) and goes up one step at a time toward the game's own, until "
                       "a witness is found; it is then shown on the game's own parameters where "
                       "it carries over (replayed there), each witness printed as soon as it is "
                       "found.  --param and --players pin a size instead.  With --json, one "
                       "JSON list at the end, a pair not decided when the command was stopped "
                       "saying \"stopped\" and the parameters it was searching.")
    _game_args(p)
    p.add_argument("--reading", metavar="NAME", help="only this reading (default: all)")
    p.add_argument("--svg-dir", metavar="DIR", help="write one SVG picture per disagreement "
                   "into DIR, created if missing (default: none)")
    p.add_argument("--timeout", type=seconds, default=120.0, metavar="SECONDS",
                   help="time limit of each Z3 query (default: %(default)s)")
    p.add_argument("--invariants", action="store_true",
                   help="search only positions where every invariant of the spec holds (no "
                   "piece missing from the box, none the rules forbid): a witness the rules "
                   "can reach; without it a smallest position may leave pieces out")
    p.add_argument("--workers", type=count(1, "a number of processes"), default=None,
                   metavar="N",
                   help="search the pairs of readings in N worker processes at once (a local "
                   "Dask cluster, started once the search has taken 1 s), one task a pair; "
                   "1: all in this process, no cluster; the same witnesses, printed in the "
                   f"same order; at most 64 (default: this machine's cores, {cores()}; two "
                   "workers gave 1.54x on a search of 150 s on 2 cores: see docs/prover.md)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="search the pairs of readings on the workers of the Dask scheduler at "
                   "ADDRESS (e.g. tcp://10.0.0.5:8786), which need this rulebook and the same "
                   "spec files; instead of --workers (default: none)")
    _long_args(p)

    p = sub.add_parser("play", help="seeded random playouts and statistics",
                       description="Play whole games between players who pick a legal move at "
                       "random (chance weighted as the spec says), and print the moves, "
                       "scores and winners, then a summary: wins and mean score by seat, "
                       "game length.  The same seed gives the same games (the first game is "
                       "the seed's own; the others are seeded from it and their number).  At "
                       "most ten games are listed; --json gives all.")
    _game_args(p)
    p.add_argument("--seed", type=count(0, "a seed"), default=0, metavar="S",
                   help="the seed of the random choices: the same seed plays the same games "
                   "(default: %(default)s)")
    p.add_argument("--games", type=count(1, "a number of games"), default=1, metavar="N",
                   help="how many games to play (default: %(default)s)")
    p.add_argument("--trace", action="store_true",
                   help="print every move of the first game (under --json: the document's "
                   "\"trace\", a list of moves)")
    p.add_argument("--workers", type=count(1, "a number of processes"), default=None,
                   metavar="N",
                   help="play the games in N worker processes at once (a local Dask "
                   "cluster, started once the games have taken 1 s: a short run starts "
                   "none), in shares of consecutive games; 1: all in this process, no "
                   "cluster; the same games and the same output as one process, only the "
                   f"time changes; at most 64 (default: this machine's cores, {cores()}; "
                   "two workers gave 1.52x on a run of 40 s on 2 cores: see docs/prover.md)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="play the games on the workers of the Dask scheduler at ADDRESS "
                   "(e.g. tcp://10.0.0.5:8786), which need this rulebook and the same spec "
                   "files; instead of --workers (default: none)")
    p.add_argument("--compare", metavar="READING", default=None,
                   help="play the same games (the same seeds) under every option of this "
                   "reading and say how often the winner changes (default: no comparison; "
                   "`rulebook readings GAME` lists the readings)")
    _long_args(p)

    p = sub.add_parser("serve", help="the explorer in a browser: play, compare readings, puzzles",
                       description="Serve the explorer on http://HOST:PORT/: play a game move by "
                       "move with every refused move and its rule, compare two readings on one "
                       "state (each stored witness opens there), step through a puzzle's "
                       "answer.  Stop it with Ctrl-C.")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: "
                   "%(default)s, this machine only)")
    p.add_argument("--port", type=count(1, "a port number"), default=8000,
                   help="the port to listen on (default: %(default)s)")

    p = sub.add_parser("docs", help="build the documentation site (Sphinx)",
                       description="Build the Sphinx site of docs/ (game pages generated from "
                       "spec/) with warnings as errors.  Needs the docs extra "
                       "(pip install -e '.[docs]') and a checkout (docs/ is not installed).")
    p.add_argument("--out", default="docs/_build/html", metavar="DIR",
                   help="output directory (default: %(default)s)")
    _long_args(p)

    sub.add_parser("lsp", help="the language server for editors (errors, hover, navigation)",
                   description="Run the language server of the rules language on stdin and "
                   "stdout, for an editor (docs/editors.md): errors as you type, hover, go to "
                   "definition, references, outline, completion and rename in .rules files.")
    return ap


def picks_tactics(args) -> bool:
    """Whether ``args`` (of `prove`, or of a script with some of its flags) give no tactic
    flag, so that the prover picks its tactics (`ProveOptions.auto`)."""
    return getattr(args, "step_timeout", None) is None and getattr(args, "journal", None) is None \
        and not any(getattr(args, f, None) for f in (
            "split_lengths", "split_on", "exact_reals", "opaque_fix", "region_facts", "symmetry",
            "fix_budget"))


def _expert_tactics(p: argparse.ArgumentParser) -> None:
    """The prover's tactics for proofs out of the default's reach, under their own heading."""
    g = p.add_argument_group(
        "expert tactics", "With none of these, the prover picks its tactics: a pass over the "
        "inductive step with --step-timeout 20 --split-lengths --symmetry (and --fix-budget "
        "10 where the rules have a fix), then, only where "
        "z3 gave up, passes under the abstractions the rules call for (--region-facts where "
        "they read component/components, else --opaque-fix where they have a fix; "
        "--exact-reals where they have an `exists real`), the last once more with 60 s a "
        "query, each keeping what the last proved; a re-proof after an edit starts at the "
        "pass that proved the edited action in the stored proofs, and a stored proof's case "
        "split (--split-on) is kept (docs/prover.md).  Any of these flags instead runs one "
        "pass, as told; none changes a verdict it gives, only what is in reach and the time "
        "it takes.")
    g.add_argument("--alone", action="store_true",
                   help="with --invariant: assume none of the other invariants; the named "
                   "ones must be inductive together, and each step query checks only their "
                   "conjuncts (a proof of part of the set where the whole is out of reach)")
    g.add_argument("--step-timeout", type=seconds, default=None, metavar="SECONDS",
                   help="time limit of each Z3 query of the inductive step; a query over it "
                   "leaves its invariant to the depth check, never 'proved' (default: 5 "
                   "with another tactic flag, else 20)")
    g.add_argument("--split-lengths", action="store_true",
                   help="retry a step query Z3 gives up on (within 2 s) case by case over the "
                   "lengths of the sequences the step changes: slower, but it proves counts "
                   "over items pushed onto sequences)")
    g.add_argument("--split-on", action="append", default=[], metavar="FIELD",
                   help="check the inductive step case by case over the values of this state "
                   "field (a bool, integer or enum), the field concrete in each case: a step "
                   "that reads a table at that field then reads numbers; repeatable")
    g.add_argument("--exact-reals", action="store_true",
                   help="decide each `exists real` exactly in the inductive step (primal or "
                   "Farkas dual) instead of as an uninterpreted predicate of what it reads: "
                   "proves what depends on the statics themselves, at a far higher cost")
    g.add_argument("--opaque-fix", action="store_true",
                   help="in the inductive step, read each expression that computes a `fix` "
                   "(a flood) over symbolic values as uninterpreted functions of what it reads: "
                   "a step that floods a large board then builds, and proves what does not "
                   "depend on the floods (the rest is left to the depth check)")
    g.add_argument("--fix-budget", type=seconds, default=None, metavar="SECONDS",
                   help="without --opaque-fix: a `fix` whose unrolling, in building a path of "
                   "the inductive step, takes more than SECONDS is read from then on as with "
                   "--opaque-fix; a path built so that breaks an invariant leaves it to the "
                   "depth check as a time-out does (default: none, every fix unrolled "
                   "however long it takes)")
    g.add_argument("--region-facts", action="store_true",
                   help="in the inductive step, read component(seed, ok) and components(ok) "
                   "as unknowns with the facts of connected regions (a component is an "
                   "equivalence class of one size; adding or taking out one square changes "
                   "the components around it only), instantiated where two sets differ by "
                   "one square (each conjunct tried first from the facts about its own "
                   "squares and those around the change), and a max or min of more than 8 "
                   "symbolic values as one unknown with its defining facts; other fixpoints "
                   "as with --opaque-fix")
    g.add_argument("--symmetry", action="store_true",
                   help="in the inductive step, prove only the first path of each orbit under "
                   "the board's symmetries (mirrors and turns of the grid); each other path "
                   "is settled when Z3 shows it follows from that one mirrored, and proved "
                   "itself otherwise; where the spec declares `rotate`, the paths of each "
                   "other player to move likewise from the first player's, the players "
                   "numbered anew: the verdicts are the same, only the time changes")
