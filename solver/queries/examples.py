"""The rulebooks' worked examples, checked in the interpreter: each expectation is confirmed or
contradicted, with the computed value beside the book's.  The rules are never bent to match."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..lang import ir
from ..lang.codec import to_json
from ..lang.progress import reporter
from ..lang.errors import EvalError
from ..engine.evaluate import Refused
from ..engine.game import Game, Move, load_game


@dataclass
class Outcome:
    text: str             # the expectation (or step) as written in the spec
    ok: bool
    computed: object      # what the rules give
    book: object          # what the book states
    note: str = ""

    def as_json(self) -> dict:
        return {"expect": self.text, "verdict": "confirmed" if self.ok else "contradicted",
                "computed": self.computed, "book": self.book, "note": self.note}


@dataclass
class ExampleResult:
    name: str
    doc: str
    ref: str
    span: str
    outcomes: list = field(default_factory=list)

    @property
    def confirmed(self) -> bool:
        return all(o.ok for o in self.outcomes)

    def as_json(self) -> dict:
        return {"example": self.name, "verdict": "confirmed" if self.confirmed else "contradicted",
                "where": self.span, "doc": self.doc, "ref": self.ref,
                "checks": [o.as_json() for o in self.outcomes]}


def run_examples(name: str, variants: tuple[str, ...] = (), only: str | None = None
                 ) -> list[ExampleResult]:
    return list(each_example(name, variants, only))


def each_example(name: str, variants: tuple[str, ...] = (), only: str | None = None,
                 progress=None):
    """Yield the result of each example of the spec (or of ``only``) as it is checked;
    ``progress`` hears how many are done (`lang.progress`)."""
    say = reporter(progress)
    base = load_game(name, tuple(variants))
    todo = [ex for ex in base.p.examples if only is None or ex.name == only]
    for k, ex in enumerate(todo):
        say("examples checked", done=k, total=len(todo), note=ex.name)
        # An example's own `with` settings (parameters, readings) win over the command's.
        if ex.params or ex.readings:
            chosen = dict(ex.readings)
            vs = tuple(v for v in variants if v.partition(":")[0] not in chosen)
            vs += tuple(f"{r}:{o}" for r, o in ex.readings)
            game = load_game(name, vs, tuple(sorted(ex.params)))
        else:
            game = base
        ex = next(e for e in game.p.examples if e.name == ex.name)
        yield run_example(game, ex)


def run_example(game: Game, ex: ir.Example) -> ExampleResult:
    res = ExampleResult(ex.name, ex.doc.text, ex.doc.ref, str(ex.span))
    env = [None] * (ex.frame + 1)
    try:
        st = game.run_stmts(ex.setup, ex.frame, game.initial(), env)
    except (Refused, EvalError) as e:
        res.outcomes.append(Outcome("from { ... }", False, f"error: {e}", "a valid state"))
        return res
    for item in ex.script:
        if isinstance(item, ir.ActionCall):
            move = example_move(game, item, st, env)
            try:
                st, _ = game.apply(st, move)
            except Refused as r:
                # The book plays this move; the rules forbid it: that contradicts the book.
                res.outcomes.append(Outcome(f"do {move.label(game)}", False,
                                            f"illegal ({r.rule}: {r.message})", "legal"))
                return res
            continue
        res.outcomes.append(_expect(game, item, st, env))
    return res


def example_move(game: Game, call: ir.ActionCall, st, env) -> Move:
    """The move an example's call names, its arguments evaluated in ``st`` and ``env``."""
    args = tuple(game.concrete.expr(a)(st, env) for a in call.args)
    return Move(call.name, args)


def _expect(game: Game, e: ir.Expect, st, env) -> Outcome:
    if e.kind == "value":
        ok = bool(game.concrete.expr(e.expr)(st, env))
        x = e.expr
        if isinstance(x, ir.Binary) and x.op == "==":
            lhs = game.concrete.expr(x.left)(st, env)
            rhs = game.concrete.expr(x.right)(st, env)
            return Outcome(e.source, ok, to_json(x.left.type, lhs), to_json(x.right.type, rhs))
        return Outcome(e.source, ok, ok, True)
    move = example_move(game, e.call, st, env)
    try:
        game.apply(st, move)
        verdict = "legal"
    except Refused as r:
        verdict = f"illegal ({r.rule})"
        rule = r.rule
    if e.kind == "legal":
        return Outcome(e.source, verdict == "legal", verdict, "legal")
    book = f"illegal ({e.because})" if e.because else "illegal"
    if verdict == "legal":
        return Outcome(e.source, False, "legal", book)
    ok = e.because is None or rule == e.because
    return Outcome(e.source, ok, verdict, book)
