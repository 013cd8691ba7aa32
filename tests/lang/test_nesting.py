"""How deeply rules may nest: the checker, the evaluator and Z3 recurse over them, so a rules
file nested past `MAX_NESTING` (expressions, ifs and the defs and procedures they call,
counted together) is refused at the place it goes past, never a RecursionError."""
from __future__ import annotations

import pytest

from solver.engine.game import load_path
from solver.lang.check_expr import MAX_NESTING
from solver.lang.digest import proof_digest, rules_digest
from solver.lang.errors import SpecError

HEAD = 'game "deep";\nstate { n: 0..3; }\n'
STEP = 'action inc() { requires small: n < 3; n += 1; }\nterminal: n == 3;\n'


def sum_of(k: int) -> str:
    return HEAD + STEP + f"def big(): 0..100000 = {' + '.join(['1'] * k)};\ninvariant ok: big() > 0;\n"


def if_chain(k: int) -> str:
    chain = "".join(f"if n == {i % 3} {{ n += 1; }} else " for i in range(k)) + "{ n += 1; }"
    return HEAD + f"action inc() {{ requires small: n < 3; {chain} }}\nterminal: n == 3;\n"


def def_chain(k: int) -> str:
    defs = "\n".join(f"def f{i}(): 0..3 = f{i + 1}();" for i in range(k))
    return HEAD + STEP + defs + f"\ndef f{k}(): 0..3 = 1;\ninvariant ok: f0() == 1;\n"


def proc_chain(k: int) -> str:
    procs = "\n".join(f"proc p{i}() {{ do p{i + 1}(); }}" for i in range(k))
    return (HEAD + "action inc() { requires small: n < 3; do p0(); }\nterminal: n == 3;\n"
            + procs + f"\nproc p{k}() {{ n += 1; }}\n")


def _load(tmp_path, text: str):
    path = tmp_path / "deep.rules"
    path.write_text(text)
    return load_path(path)


@pytest.mark.parametrize("text, line, col, inside", [
    (sum_of(800), 5, 24, " (in big)"),
    (if_chain(1500), 3, None, ""),
    # f0 on line 5; the call of f199 in f198's body is the 201st level
    (def_chain(3000), 5 + MAX_NESTING - 2, 13, " (in f198, reached through 198 nested calls)"),
    (proc_chain(3000), 5 + MAX_NESTING - 1, 15, " (in p199, reached through 199 nested calls)"),
])
def test_past_the_limit_is_one_located_error(tmp_path, text, line, col, inside):
    with pytest.raises(SpecError) as e:
        _load(tmp_path, text)
    err = e.value
    assert err.span.line == line and (col is None or err.span.col == col), err.headline()
    assert err.message.startswith(f"nested more than {MAX_NESTING} deep{inside}: the checker's "
                                  f"limit"), err.message
    # the source line is shown around the caret, however long it is
    shown, caret = err.context().splitlines()
    assert len(shown) < 120 and caret.strip() == "^"


def test_a_def_written_out_again_deeper_counts_at_its_depth(tmp_path):
    """`big` is checked once at the top of an action; written out again at the end of a chain
    of calls it is as deep as the chain plus itself."""
    k = MAX_NESTING - 10
    chain = "\n".join(f"def f{i}(): 0..100000 = f{i + 1}();" for i in range(40))
    text = (HEAD + f"def big(): 0..100000 = {' + '.join(['1'] * k)};\n"
            "action inc() { requires small: n < 3 and big() > 1; n += 1; }\n"
            f"{chain}\ndef f40(): 0..100000 = big();\ninvariant a: f0() > 0;\n")
    with pytest.raises(SpecError) as e:
        _load(tmp_path, text)
    assert e.value.message.startswith(f"nested more than {MAX_NESTING} deep (a call of def "
                                      f"big, {k} deep itself, made 43 deep)")


@pytest.mark.parametrize("make", [sum_of, if_chain, def_chain, proc_chain])
def test_just_under_the_limit_is_accepted_and_runs(tmp_path, make):
    """What the checker accepts, the interpreter and Z3 run (no RecursionError further on)."""
    game = _load(tmp_path, make(MAX_NESTING - 10))
    st = game.initial()
    assert [m.action for m, *_ in game.moves(st) if _[-1] is None] == ["inc"]
    from solver.prover.options import ProveOptions
    from solver.prover.prove import prove
    res = prove(game, ProveOptions(bmc_depth=1, timeout_ms=20_000))
    assert all(r.status != "refuted" for r in res)


def test_the_internal_marker_changes_no_digest_of_the_rules(tmp_path):
    plain = HEAD.replace("n: 0..3;", "n: 0..3; k: 0..3;") + STEP
    marked = plain.replace("k: 0..3;", "internal  k: 0..3;")
    a, b = _load(tmp_path, plain), _load(tmp_path, marked)
    assert rules_digest(a) == rules_digest(b) and proof_digest(a) == proof_digest(b)
    changed = _load(tmp_path, plain.replace("k: 0..3;", "k: 0..2;"))
    assert rules_digest(changed) != rules_digest(a)
