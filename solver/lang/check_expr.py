"""Expressions: names, operators, calls of defs and builtins, quantifiers and domains, each
typed with its bounds (a mixin of `check.Checker`)."""
from __future__ import annotations

from . import ir
from .builtins import BUILTINS
from .check_real import REAL
from .errors import SpecError
from .scope import Frame, Scope, renumber
from .types import (BOOL, BagT, BoolT, IntT, MapT, RealFamilyT, RealT, RecordT, SeqT, SetT,
                    Type, assignable, cardinality, comparable, default, elem_type, finite,
                    is_finite, needs_bounds)


# How deeply expressions, statements and the defs they call may nest, counted together: the
# checker, the evaluator and Z3 all walk the rules recursively, within Python's recursion
# limit (1000 frames).  The shipped specs nest at most 30 deep.
MAX_NESTING = 200


class ExprChecks:
    """The expressions of `Checker`: each checked against an expected type when one is known
    (``want``), which types empty literals and the bounds of a `fix`."""

    # ---- expressions -----------------------------------------------------------------------

    def expr(self, t, sc: Scope, want: Type | None = None) -> ir.Expr:
        try:
            self.nest_deeper(t)
            return self._expr(t, sc, want)
        finally:
            self.nesting -= 1

    def nest_deeper(self, t) -> None:
        """One level of nesting deeper to check ``t`` (an expression or a statement); the
        caller steps back out in a ``finally``.  Past `MAX_NESTING`, `too_deep`."""
        self.nesting += 1
        if self.nesting > self.reached:
            self.reached = self.nesting
            if self.nesting > MAX_NESTING:
                raise self.too_deep(t)

    def too_deep(self, t) -> SpecError:
        """The error of a construct nested past `MAX_NESTING`."""
        calls = len(self.inlining)
        inside = "" if not calls else f" (in {self.inlining[-1]}" + (
            f", reached through {calls - 1} nested calls)" if calls > 1 else ")")
        return self.err(t, self.too_deep_message(inside))

    @staticmethod
    def too_deep_message(inside: str) -> str:
        return (f"nested more than {MAX_NESTING} deep{inside}: the checker's limit on "
                f"expressions, statements and the defs they call, counted together; split it "
                f"(a let, a def, a table)")

    def _expr(self, t, sc: Scope, want: Type | None = None) -> ir.Expr:
        sp = self.span(t)
        match t.data:
            case "int_lit":
                v = int(t.children[0])
                return ir.Const(IntT(v, v), sp, v)
            case "neg_int_lit":
                v = -int(t.children[0])
                return ir.Const(IntT(v, v), sp, v)
            case "true_lit":
                return ir.Const(BOOL, sp, True)
            case "false_lit":
                return ir.Const(BOOL, sp, False)
            case "var":
                return self._var(t, sc)
            case "state_ref":
                if not sc.allow_state or self.state_type is None:
                    raise self.err(t, "`state` is not available here")
                return ir.StateRef(self.state_type, sp, sc.old)
            case "call_expr":
                return self._call(t, sc, want)
            case "list_lit":
                return self._list(t, sc, want)
            case "set_lit":
                return self._set(t, sc, want)
            case "index":
                return self._index(t, sc)
            case "field_access":
                rec = self.expr(t.children[0], sc)
                name = str(t.children[1])
                if not isinstance(rec.type, RecordT) or rec.type.index(name) is None:
                    raise self.err(t, f"{rec.type} has no field {name!r}")
                i = rec.type.index(name)
                return ir.Field(rec.type.fields[i][1], sp, rec, i, name)
            case "with_":
                rec = self.expr(t.children[0], sc)
                if not isinstance(rec.type, RecordT):
                    raise self.err(t, f"`with` needs a record, not {rec.type}")
                ups = []
                for u in t.children[1:]:
                    name = str(u.children[0])
                    i = rec.type.index(name)
                    if i is None:
                        raise self.err(u, f"{rec.type} has no field {name!r}")
                    ft = rec.type.fields[i][1]
                    ups.append((i, self.coerce(self.expr(u.children[1], sc, ft), ft, u)))
                return ir.With(rec.type, sp, rec, tuple(ups))
            case "neg":
                a = self.expr(t.children[0], sc)
                if isinstance(a.type, RealT):
                    return ir.Unary(REAL, sp, "neg", a)
                if not isinstance(a.type, IntT):
                    raise self.err(t.children[0], f"expected a number, found {a.type}")
                return ir.Unary(IntT(-a.type.hi, -a.type.lo), sp, "neg", a)
            case "arith":
                return self._arith(t, sc, want)
            case "compare":
                return self._compare(t, sc)
            case "member" | "not_member":
                elem = self.expr(t.children[0], sc)
                coll = self.expr(t.children[1], sc)
                et = elem_type(coll.type)
                if et is None:
                    raise self.err(t.children[1], f"`in` needs a seq, bag or set, not {coll.type}")
                if not comparable(elem.type, et):
                    raise self.err(t, f"cannot look for a {elem.type} in a {coll.type}")
                m = ir.Member(BOOL, sp, elem, coll)
                return ir.Unary(BOOL, sp, "not", m) if t.data == "not_member" else m
            case "not_":
                a = self.bool_expr(t.children[0], sc)
                self.no_real(a, t, "`not` over real constraints: the body of `exists real` is "
                             "a conjunction of linear comparisons")
                return ir.Unary(BOOL, sp, "not", a)
            case "and_" | "or_":
                op = "and" if t.data == "and_" else "or"
                a = self.bool_expr(t.children[0], sc)
                b = self.bool_expr(t.children[1], sc)
                if op == "or" and (self.has_real(a) or self.has_real(b)):
                    raise self.err(t, "`or` over real constraints: the body of `exists real` "
                                   "must be a conjunction (use `if` or `implies` on a "
                                   "condition free of unknowns)")
                return ir.Binary(BOOL, sp, op, a, b)
            case "implies_":
                a = self.bool_expr(t.children[0], sc)
                self.no_real(a, t.children[0], "the condition of `implies` cannot use real "
                             "unknowns")
                b = self.bool_expr(t.children[1], sc)
                return ir.Binary(BOOL, sp, "or", ir.Unary(BOOL, sp, "not", a), b)
            case "ite":
                c = self.bool_expr(t.children[0], sc)
                self.no_real(c, t.children[0], "the condition of `if` cannot use real unknowns")
                a = self.expr(t.children[1], sc, want)
                b = self.expr(t.children[2], sc, want or a.type)
                typ = self.join(a.type, b.type, t)
                return ir.Ite(typ, sp, c, a, b)
            case "let_expr":
                v = self.expr(t.children[1], sc)
                slot = sc.frame.new()
                name = str(t.children[0])
                body = self.expr(t.children[2], sc.bind(name, ir.Local(v.type, sp, name, slot)),
                                 want)
                return ir.Let(body.type, sp, slot, v, body)
            case "quant":
                return self._quant(t, sc, want)
            case "largest":
                return self._largest(t, sc)
            case "real_exists":
                return self.real_exists(t, sc)
            case "fix_expr":
                return self._fix(t, sc, want)
            case "reach_expr":
                return self._reachable(t, sc)
        raise self.err(t, f"unsupported expression {t.data}")

    def _reachable(self, t, sc: Scope) -> ir.Expr:
        from_t, *names, within_t, goal_t = t.children
        if not sc.allow_state or sc.old:
            raise self.err(t, "`reachable` searches from the current state: it is not allowed "
                           "here")
        acts = []
        for n in names:
            it = self.items.get(("action", str(n)))
            if it is None:
                raise self.err(n, f"unknown action {str(n)!r}")
            if str(it.tree.children[0].children[0]) == "chance":
                raise self.err(n, f"`reachable` takes the players' moves; {str(n)!r} is a "
                               f"chance action")
            if str(n) in acts:
                raise self.err(n, f"action {str(n)!r} named twice")
            acts.append(str(n))
        setup: list = []
        if from_t is not None:
            setup, sc = self.stmts(from_t.children[0].children, sc)
        within = self.int_expr(within_t, sc)
        goal = self.bool_expr(goal_t, sc)
        self.no_real(goal, goal_t, "the goal of `reachable` cannot use real unknowns")
        sp = self.span(t)
        return ir.Reachable(BOOL, sp, tuple(acts), within, goal,
                            ir.StateRef(self.state_type, sp, False), tuple(setup))

    def _fix(self, t, sc: Scope, want) -> ir.Expr:
        name_t, seed_t, bound_t, step_t = t.children
        seed = self.expr(seed_t, sc, want)
        typ = seed.type
        if want is not None and isinstance(want, (MapT, SetT)) and assignable(typ, want):
            if needs_bounds(typ, want):
                raise self.err(seed_t, f"the seed of a fix must fit {want}, found {typ}")
            typ = want
        if bound_t is not None:
            try:
                n = self.const_eval(bound_t, Scope({}, Frame(), allow_state=False))
            except SpecError as ex:
                raise self.err(bound_t, f"`within` of a fix needs a constant count ({ex.message})"
                               ) from None
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise self.err(bound_t, f"`within` of a fix needs a constant count, found {n!r}")
        elif isinstance(typ, MapT) and isinstance(typ.val, BoolT) or isinstance(typ, SetT):
            # A growing set of keys stops changing after at most one step per key.
            n = cardinality(typ.key if isinstance(typ, MapT) else typ.elem)
        else:
            raise self.err(t, f"a fix over {typ} needs `within N` (only a map[K, bool] or a "
                           f"set[K] has a default bound)")
        if isinstance(typ, IntT):
            raise self.err(seed_t, "a fix iterates a map, set, record or bool, not a number "
                           "(its bounds could not be kept)")
        slot = sc.frame.new()
        name = str(name_t)
        step = self.expr(step_t, sc.bind(name, ir.Local(typ, self.span(name_t), name, slot)),
                         typ)
        if not assignable(step.type, typ) or needs_bounds(step.type, typ):
            raise self.err(step_t, f"the step of a fix must give a {typ}, found {step.type}")
        return ir.Fix(typ, self.span(t), slot, seed, n, step)

    def bool_expr(self, t, sc: Scope) -> ir.Expr:
        e = self.expr(t, sc, BOOL)
        if not isinstance(e.type, BoolT):
            raise self.err(t, f"expected a condition (bool), found {e.type}")
        return e

    def int_expr(self, t, sc: Scope) -> ir.Expr:
        e = self.expr(t, sc)
        if not isinstance(e.type, IntT):
            raise self.err(t, f"expected a number, found {e.type}")
        return e

    def _var(self, t, sc: Scope) -> ir.Expr:
        name = str(t.children[0])
        sp = self.span(t)
        if name in sc.names:
            loc = sc.names[name]
            if isinstance(loc.type, RealFamilyT):
                raise self.err(t, f"the unknowns {name} are read one at a time, as {name}[k]")
            return ir.Local(loc.type, sp, name, loc.slot)
        if sc.allow_state and self.state_type is not None:
            i = self.state_type.index(name)
            if i is not None:
                return ir.Field(self.state_type.fields[i][1], sp,
                                ir.StateRef(self.state_type, sp, sc.old), i, name)
        v = self.static_value(name, t)
        if v is not None:
            if v[0] == "value":
                return ir.Const(v[1] if not isinstance(v[1], IntT) else IntT(v[2], v[2]), sp,
                                v[2])
            raise self.err(t, f"{name!r} is a type, not a value")
        m = self.lookup_enum_member(name)
        if m is not None:
            return ir.Const(m[0], sp, m[1])
        if ("def", name) in self.items:
            raise self.err(t, f"{name!r} is a def: call it as {name}(...)")
        if not sc.allow_state and self.state_type is None and self._is_state_field(name):
            raise self.err(t, f"{name!r} is a state field; a constant cannot read the state")
        raise self.err(t, f"unknown name {name!r}")

    def _is_state_field(self, name: str) -> bool:
        it = self.items.get(("state", "state"))
        if it is None:
            return False
        return any(str(f.children[1]) == name for x in [it, *it.extra] for f in x.tree.children)

    def _index(self, t, sc: Scope) -> ir.Expr:
        rv = self.real_var(t, sc) if self.real_depth else None
        if rv is not None:
            return rv
        coll = self.expr(t.children[0], sc)
        sp = self.span(t)
        ct = coll.type
        match ct:
            case MapT(key=k, val=v):
                key = self.coerce(self.expr(t.children[1], sc, k), k, t.children[1])
                return ir.Index(v, sp, coll, key)
            case BagT(elem=e, most=m):
                key = self.coerce(self.expr(t.children[1], sc, e), e, t.children[1])
                return ir.Index(IntT(0, m), sp, coll, key)
            case SetT(elem=e):
                key = self.coerce(self.expr(t.children[1], sc, e), e, t.children[1])
                return ir.Index(BOOL, sp, coll, key)
            case SeqT(elem=e):
                key = self.int_expr(t.children[1], sc)
                return ir.Index(e, sp, coll, key)
        raise self.err(t, f"cannot index a {ct}")

    def _arith(self, t, sc: Scope, want) -> ir.Expr:
        op = str(t.children[1])
        sp = self.span(t)
        a = self.expr(t.children[0], sc, want if isinstance(want, BagT) else None)
        if isinstance(a.type, BagT) and op in "+-":
            b = self.coerce(self.expr(t.children[2], sc, a.type), a.type, t.children[2])
            bt = b.type
            most = a.type.most + (bt.most if isinstance(bt, BagT) else
                                  bt.val.hi if isinstance(bt, MapT) else 0)
            return ir.Binary(BagT(a.type.elem, most if op == "+" else a.type.most), sp, op, a, b)
        if isinstance(a.type, RealT):
            return self.real_arith(t, op, a, self.expr(t.children[2], sc))
        if not isinstance(a.type, IntT):
            raise self.err(t.children[0], f"expected a number, found {a.type}")
        b = self.expr(t.children[2], sc)
        if isinstance(b.type, RealT):
            return self.real_arith(t, op, a, b)
        if not isinstance(b.type, IntT):
            raise self.err(t.children[2], f"expected a number, found {b.type}")
        x, y = a.type, b.type
        match op:
            case "+":
                r = IntT(x.lo + y.lo, x.hi + y.hi)
            case "-":
                r = IntT(x.lo - y.hi, x.hi - y.lo)
            case "*":
                c = [x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi]
                r = IntT(min(c), max(c))
            case "/":
                if y.lo <= 0 <= y.hi and not (y.lo == y.hi == 0):
                    pass
                m = max(abs(x.lo), abs(x.hi))
                r = IntT(-m, m) if x.lo < 0 else IntT(0, m)
            case "%":
                m = max(abs(y.lo), abs(y.hi))
                r = IntT(0, max(0, m - 1))
            case _:
                raise AssertionError(op)
        return ir.Binary(r, sp, op, a, b)

    def _compare(self, t, sc: Scope) -> ir.Expr:
        op = str(t.children[1])
        a = self.expr(t.children[0], sc)
        b = self.expr(t.children[2], sc, a.type)
        sp = self.span(t)
        if isinstance(a.type, RealT) or isinstance(b.type, RealT):
            return self.real_compare(t, op, a, b)
        if op in ("==", "!="):
            if not comparable(a.type, b.type):
                raise self.err(t, f"cannot compare {a.type} with {b.type}")
            return ir.Binary(BOOL, sp, op, a, b)
        if isinstance(a.type, BagT) and op == "<=" and comparable(a.type, b.type):
            return ir.Binary(BOOL, sp, op, a, b)
        if not (isinstance(a.type, IntT) and isinstance(b.type, IntT)):
            raise self.err(t, f"`{op}` compares numbers (or bags with <=), not {a.type} and "
                           f"{b.type}")
        return ir.Binary(BOOL, sp, op, a, b)

    def _list(self, t, sc: Scope, want) -> ir.Expr:
        items_t = t.children[0].children if t.children[0] is not None else []
        sp = self.span(t)
        match want:
            case SeqT(elem=e, cap=cap):
                items = tuple(self.coerce(self.expr(i, sc, e), e, i) for i in items_t)
                if len(items) > cap:
                    raise self.err(t, f"{len(items)} elements do not fit in {want}")
                return ir.SeqLit(want, sp, items)
            case BagT(elem=e):
                items = tuple(self.coerce(self.expr(i, sc, e), e, i) for i in items_t)
                return ir.BagLit(want, sp, items)
            case MapT() | SetT() if not items_t:
                return ir.Const(want, sp, default(want))
        if not items_t:
            raise self.err(t, "cannot tell the type of `[]` here")
        items = [self.expr(i, sc) for i in items_t]
        et = items[0].type
        for i, it in zip(items_t[1:], items[1:]):
            et = self.join(et, it.type, i)
        return ir.SeqLit(SeqT(et, len(items)), sp, tuple(items))

    def _set(self, t, sc: Scope, want) -> ir.Expr:
        items_t = t.children[0].children if t.children[0] is not None else []
        sp = self.span(t)
        if isinstance(want, SetT):
            return ir.BagLit(want, sp, tuple(self.coerce(self.expr(i, sc, want.elem),
                                                         want.elem, i) for i in items_t))
        if not items_t:
            raise self.err(t, "cannot tell the type of `{}` here")
        items = [self.expr(i, sc) for i in items_t]
        et = items[0].type
        for i, it in zip(items_t[1:], items[1:]):
            et = self.join(et, it.type, i)
        self.need_finite(et, t)
        return ir.BagLit(SetT(et), sp, tuple(items))

    # ---- calls: builtins, record constructors, defs ---------------------------------------

    def _call(self, t, sc: Scope, want) -> ir.Expr:
        name = str(t.children[0])
        args_t = list(t.children[1].children) if t.children[1] is not None else []
        sp = self.span(t)
        if name in BUILTINS:
            return BUILTINS[name](self, t, args_t, sc, want)
        v = self.static_value(name, t)
        if v is not None and v[0] == "type" and isinstance(v[1], RecordT):
            rt = v[1]
            if len(args_t) != len(rt.fields):
                raise self.err(t, f"{name} takes {len(rt.fields)} fields, given {len(args_t)}")
            items = tuple(self.coerce(self.expr(a, sc, ft), ft, a)
                          for a, (_, ft) in zip(args_t, rt.fields))
            return ir.RecordLit(rt, sp, items)
        key = ("def", name)
        if key not in self.items:
            raise self.err(t, f"unknown function {name!r}")
        it = self.items[key]
        d = it.tree
        params = d.children[1].children if d.children[1] is not None else []
        if len(params) != len(args_t):
            raise self.err(t, f"{name} takes {len(params)} argument(s), given {len(args_t)}")
        if name in self.inlining:
            raise self.err(t, f"{name} calls itself (through {' -> '.join(self.inlining)}); "
                           f"defs may not recurse")
        ptypes = self.def_params(name)
        args, slots = [], []
        for a, (pn, pt) in zip(args_t, ptypes):
            args.append(self.coerce(self.expr(a, sc, pt), pt, a))
            slots.append(sc.frame.new())
        return self.inline(it, ptypes, tuple(args), tuple(slots), sc, sp)

    def def_params(self, name: str) -> list[tuple[str, Type]]:
        """The parameters of the def ``name``: (name, type) each."""
        it = self.items[("def", name)]
        params = it.tree.children[1].children if it.tree.children[1] is not None else []
        saved = self.cursor()
        self.enter(it)
        try:
            return [(str(p.children[0]), self.type_(p.children[1])) for p in params]
        finally:
            self.goto(saved)

    def inline(self, it, ptypes, args: tuple, slots: tuple, sc: Scope, sp) -> ir.Call:
        """The call of the def ``it`` (parameters ``ptypes``) on the checked ``args``, which go
        to ``slots`` of the caller's frame; ``sp`` is the call's span."""
        name, d = it.name, it.tree
        inner = Scope({}, sc.frame, sc.old, sc.transition, sc.allow_state)
        for (pn, pt), slot in zip(ptypes, slots):
            inner = inner.bind(pn, ir.Local(pt, sp, pn, slot))
        saved = self.cursor()
        # The body reads only its parameters, the statics and the state (its scope starts
        # empty), so it is checked once per kind of scope; at the next call the same IR is
        # renumbered into this frame: its parameters' slots, then its own after the frame's.
        key = (name, sc.old, sc.transition, sc.allow_state, self.state_type is None)
        hit = self._bodies.get(key)
        if hit is not None:
            body0, slots0, base0, size, typ, check, height = hit
            # The body checked once is written out again here, as deep as it was then.
            if self.nesting + height > MAX_NESTING:
                raise SpecError(self.too_deep_message(f" (a call of def {name}, {height} "
                                                      f"deep itself, made {self.nesting} deep)"),
                                sp, self.cursor()[1])
            self.reached = max(self.reached, self.nesting + height)
            base = sc.frame.size
            sc.frame.size += size
            moved = dict(zip(slots0, slots))
            moved.update((s0, s0 - base0 + base) for s0 in range(base0, base0 + size))
            return ir.Call(typ, sp, name, args, slots, renumber(body0, moved), check)
        base0 = sc.frame.size
        self.inlining.append(name)
        self.enter(it)
        outer, self.reached = self.reached, self.nesting
        try:
            ret = self.type_(d.children[2]) if d.children[2] is not None else None
            body = self.expr(d.children[3], inner, ret)
            if ret is not None:
                body = self.coerce(body, ret, d.children[3])
        finally:
            self.inlining.pop()
            self.goto(saved)
            height = self.reached - self.nesting
            self.reached = max(outer, self.reached)
        typ = ret if ret is not None else body.type
        # A declared result type is a promise: what the checker cannot prove is checked when
        # the def is evaluated (a spec bug otherwise, reported with the def's span).
        check = ret if ret is not None and needs_bounds(body.type, ret) else None
        self._bodies[key] = (body, slots, base0, sc.frame.size - base0, typ, check, height)
        return ir.Call(typ, sp, name, args, slots, body, check)

    # ---- quantifiers and domains ------------------------------------------------------------

    def domain(self, t, sc: Scope, allow_subbags: bool = False) -> ir.Domain:
        sp = self.span(t)
        if t.data == "range_domain":
            lo, hi = self.int_expr(t.children[0], sc), self.int_expr(t.children[1], sc)
            return ir.RangeDomain(IntT(lo.type.lo, max(lo.type.lo, hi.type.hi)), sp, lo, hi)
        if t.data == "var":
            name = str(t.children[0])
            if name not in sc.names:
                v = self.static_value(name, t)
                if v is not None and v[0] == "type":
                    if not is_finite(v[1]):
                        raise self.err(t, f"cannot range over {v[1]}: not a finite type")
                    return ir.TypeDomain(v[1], sp)
        if t.data == "call_expr" and str(t.children[0]) == "subbags":
            if not allow_subbags:
                raise self.err(t, "`subbags(...)` is only a domain of `choose`")
            args = t.children[1].children if t.children[1] is not None else []
            if len(args) != 1:
                raise self.err(t, "subbags takes one bag")
            b = self.expr(args[0], sc)
            if not isinstance(b.type, BagT):
                raise self.err(args[0], f"subbags needs a bag, not {b.type}")
            return ir.SubbagDomain(b.type, sp, b)
        c = self.expr(t, sc)
        et = elem_type(c.type)
        if et is None:
            raise self.err(t, f"cannot range over a {c.type}: use a type, a..b, or a seq, "
                           f"bag or set")
        return ir.CollDomain(et, sp, c)

    def _quant(self, t, sc: Scope, want) -> ir.Expr:
        kind = str(t.children[0].children[0])
        binder, where_t, body_t = t.children[1], t.children[2], t.children[3]
        dom = self.domain(binder.children[1], sc)
        slot = sc.frame.new()
        inner, where = self._bind(binder, dom, slot, where_t, sc)
        sp = self.span(t)
        n = _domain_size(dom)
        if kind in ("forall", "exists"):
            body = self.bool_expr(body_t, inner)
            if kind == "exists":
                self.no_real(body, t, "`exists` over real constraints is a disjunction: only "
                             "`exists real` introduces unknowns, and only `forall` and `and` "
                             "combine their constraints")
            return ir.Quant(BOOL, sp, kind, slot, dom, where, body)
        if kind == "count":
            body = self.bool_expr(body_t, inner)
            self.no_real(body, t, "real constraints cannot escape into `count`")
            return ir.Quant(IntT(0, n), sp, kind, slot, dom, where, body)
        if kind == "table":
            if not isinstance(dom, ir.TypeDomain):
                raise self.err(binder, "`table` ranges over a type")
            body = self.expr(body_t, inner)
            self.no_real(body, t, "real terms cannot escape into a `table`")
            return ir.Quant(MapT(dom.elem, body.type), sp, kind, slot, dom, where, body)
        body = self.expr(body_t, inner)
        if isinstance(body.type, RealT):
            if kind != "sum":
                raise self.err(t, f"real terms cannot escape into `{kind}` (only `sum` adds "
                               f"them)")
            return ir.Quant(REAL, sp, kind, slot, dom, where, body)
        if not isinstance(body.type, IntT):
            raise self.err(body_t, f"expected a number, found {body.type}")
        bt = body.type
        if kind == "sum":
            typ = IntT(min(0, n * bt.lo), max(0, n * bt.hi))
        else:
            typ = IntT(min(bt.lo, 0), max(bt.hi, 0))
        return ir.Quant(typ, sp, kind, slot, dom, where, body)

    def _bind(self, binder, dom: ir.Domain, slot: int, where_t, sc: Scope):
        """The scope inside a binder ``name in dom`` (its local in ``slot``) and its `where`
        filter (None without one), which may not use real unknowns."""
        name = str(binder.children[0])
        inner = sc.bind(name, ir.Local(dom.elem, self.span(binder), name, slot))
        if where_t is None:
            return inner, None
        where = self.bool_expr(where_t, inner)
        self.no_real(where, where_t, "a `where` cannot use real unknowns")
        return inner, where

    def _largest(self, t, sc: Scope) -> ir.Expr:
        """``largest k of { groups }``: k and every value and count are integers; the type is
        0..k·v, v the largest value any item can have (0 when none is above 0)."""
        count_t, *group_ts = [c for c in t.children if c is not None]
        count = self.int_expr(count_t, sc)
        groups, top = [], 0
        for g in group_ts:
            binder, where_t, *gains = g.children
            slot = sc.frame.new()
            inner, dom, where = sc, None, None
            if binder is not None:
                dom = self.domain(binder.children[1], sc)
                inner, where = self._bind(binder, dom, slot, where_t, sc)
            values, times = [], []
            for gain in gains:
                v_t, n_t = gain.children
                v = self.int_expr(v_t, inner)
                n = self.int_expr(n_t, inner) if n_t is not None else None
                values.append(v)
                times.append(n)
                top = max(top, v.type.hi)
            groups.append(ir.ItemGroup(BOOL, self.span(g), slot, dom, where, tuple(values),
                                       tuple(times)))
        return ir.Largest(IntT(0, max(0, count.type.hi) * top), self.span(t), count,
                          tuple(groups))

    # ---- typing helpers ------------------------------------------------------------------

    def join(self, a: Type, b: Type, node) -> Type:
        if isinstance(a, (IntT, RealT)) and isinstance(b, (IntT, RealT)) and REAL in (a, b):
            return REAL
        if isinstance(a, IntT) and isinstance(b, IntT):
            return IntT(min(a.lo, b.lo), max(a.hi, b.hi))
        if isinstance(a, SeqT) and isinstance(b, SeqT):
            return SeqT(self.join(a.elem, b.elem, node), max(a.cap, b.cap))
        if isinstance(a, BagT) and isinstance(b, BagT) and a.elem == b.elem:
            return BagT(a.elem, max(a.most, b.most))
        if isinstance(a, MapT) and isinstance(b, MapT) and a.key == b.key:
            return MapT(a.key, self.join(a.val, b.val, node))
        if a == b:
            return a
        raise self.err(node, f"incompatible types {a} and {b}")

    def coerce(self, e: ir.Expr, want: Type, node) -> ir.Expr:
        """Check that ``e`` may be stored where a ``want`` is expected."""
        if isinstance(e.type, RealT) and not isinstance(want, RealT):
            raise self.err(node, f"a real term cannot leave its `exists real` (expected {want})")
        if not assignable(e.type, want):
            raise self.err(node, f"expected {want}, found {e.type}")
        return e


def _domain_size(d: ir.Domain) -> int:
    match d:
        case ir.TypeDomain(elem=e):
            return cardinality(e)
        case ir.RangeDomain(elem=e):
            return max(0, e.hi - e.lo + 1)
        case ir.CollDomain(coll=c):
            t = c.type
            if isinstance(t, SeqT):
                return t.cap
            return finite(t.elem).size
        case ir.SubbagDomain():
            return 1
    raise AssertionError(d)
