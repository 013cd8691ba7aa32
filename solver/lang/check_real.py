"""The checker's part for `exists real f[k in K where g]: body` (a mixin of `check.Checker`).

The body must stay a linear feasibility problem, so that an LP (and z3's linear real
arithmetic) decides it: a conjunction (`and`, `forall`, `if`/`implies` on conditions free of
unknowns) of comparisons `<= >= == < >` between linear terms (`f[k]`, integer × term, `+ -`,
unary `-`, `sum`, `let`).  Everything else that would touch an unknown is refused here, with the
position of the offending node: `or`, `not`, `exists`, `!=` (disjunctions: a MILP), products of
two terms (non-linear), `/ %`, and any way for a real to escape (a def argument, `count`,
`max`, `table`, a state field...)."""
from __future__ import annotations

from . import ir
from .irwalk import has_real
from .types import BOOL, IntT, RealFamilyT, RealT

REAL = RealT()


class RealChecks:
    real_depth = 0   # > 0 inside the body of an `exists real`: only then can reals appear

    def real_exists(self, t, sc) -> ir.RealExists:
        name_t, binder, where_t, body_t = t.children
        name = str(name_t)
        sp = self.span(t)
        if self.real_depth:
            raise self.err(t, "`exists real` cannot be nested in the body of another one")
        var = str(binder.children[0])
        dom = self.domain(binder.children[1], sc)
        if not isinstance(dom, ir.TypeDomain):
            raise self.err(binder.children[1], "the unknowns of `exists real` are indexed by a "
                           "finite type (write `where` to keep some of its values)")
        slot = sc.frame.new()
        inner = sc.bind(var, ir.Local(dom.elem, self.span(binder), var, slot))
        where = self.bool_expr(where_t, inner) if where_t is not None else None
        fam = sc.frame.new()
        body_sc = sc.bind(name, ir.Local(RealFamilyT(dom.elem), sp, name, fam))
        self.real_depth += 1
        try:
            body = self.bool_expr(body_t, body_sc)
        finally:
            self.real_depth -= 1
        return ir.RealExists(BOOL, sp, name, slot, fam, dom, where, body)

    def real_var(self, t, sc):
        """``f[k]`` when ``f`` names real unknowns, else None."""
        coll = t.children[0]
        if coll.data != "var":
            return None
        loc = sc.names.get(str(coll.children[0]))
        if loc is None or not isinstance(loc.type, RealFamilyT):
            return None
        kt = loc.type.key
        key = self.coerce(self.expr(t.children[1], sc, kt), kt, t.children[1])
        return ir.RealVar(REAL, self.span(t), loc.slot, key, loc.name)

    def has_real(self, e) -> bool:
        return self.real_depth > 0 and has_real(e)

    def no_real(self, e, node, what: str) -> None:
        if self.has_real(e):
            raise self.err(node, what)

    def real_arith(self, t, op: str, a, b) -> ir.Expr:
        sp = self.span(t)
        for x, node in ((a, t.children[0]), (b, t.children[2])):
            if not isinstance(x.type, (IntT, RealT)):
                raise self.err(node, f"expected a number, found {x.type}")
        if op == "*":
            if isinstance(a.type, RealT) and isinstance(b.type, RealT):
                raise self.err(t, "non-linear term: a product of two real terms (one factor "
                               "must be an integer free of unknowns)")
            return ir.Binary(REAL, sp, op, a, b)
        if op in "/%":
            raise self.err(t, f"`{op}` does not apply to real terms (coefficients are "
                           f"integers: scale the other side instead)")
        return ir.Binary(REAL, sp, op, a, b)

    def real_compare(self, t, op: str, a, b) -> ir.Expr:
        if op == "!=":
            raise self.err(t, "`!=` on real terms is a disjunction (< or >): not linear "
                           "feasibility")
        for x, node in ((a, t.children[0]), (b, t.children[2])):
            if not isinstance(x.type, (IntT, RealT)):
                raise self.err(node, f"cannot compare a real term with {x.type}")
        return ir.Binary(BOOL, self.span(t), op, a, b)
