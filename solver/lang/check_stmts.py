"""Statements: `requires`, `let`, assignments to the state, `if`, `show` and the inlined
`do` of a procedure (a mixin of `check.Checker`)."""
from __future__ import annotations

from . import ir
from .scope import Scope
from .sources import string
from .types import BOOL, BagT, IntT, MapT, RecordT, SeqT, SetT, TextT, needs_bounds


class StmtChecks:
    """The statements of `Checker`: a block checked in order, each `let` in scope after it."""

    def stmts(self, trees, sc: Scope, allow_assign: bool = True) -> tuple[list[ir.Stmt], Scope]:
        out: list[ir.Stmt] = []
        for t in trees:
            sp = self.span(t)
            match t.data:
                case "requires_stmt":
                    name = str(t.children[0])
                    msg = string(t.children[1]) if t.children[1] is not None else name
                    out.append(ir.Requires(sp, name, msg, self.bool_expr(t.children[2], sc)))
                case "let_stmt":
                    v = self.expr(t.children[1], sc)
                    slot = sc.frame.new()
                    name = str(t.children[0])
                    out.append(ir.LetStmt(sp, slot, v))
                    sc = sc.bind(name, ir.Local(v.type, sp, name, slot))
                case "assign_stmt":
                    if not allow_assign:
                        raise self.err(t, "assignments are not allowed here")
                    out.append(self._assign(t, sc))
                case "if_stmt":
                    out.append(self._if(t, sc, allow_assign))
                case "show_stmt":
                    items = []
                    via = None
                    for i in t.children:
                        if i is None:
                            continue
                        if i.data == "show_text":
                            items.append(ir.Text(TextT(), self.span(i), string(i.children[0])))
                        elif i.data == "show_via":
                            via = self._via(i.children[0], sc)
                        else:
                            items.append(self.expr(i, sc))
                    out.append(ir.Show(sp, tuple(items), via))
                case "do_stmt":
                    out.extend(self._do(t, sc, allow_assign))
                case _:
                    raise self.err(t, f"unsupported statement {t.data}")
        return out, sc

    def _via(self, t, sc: Scope) -> ir.Expr:
        """The region of `show ... via r`: a set, or a map to bool (the squares passed)."""
        e = self.expr(t, sc)
        if isinstance(e.type, SetT) or (isinstance(e.type, MapT) and e.type.val == BOOL):
            return e
        raise self.err(t, "`via` takes the squares a move passes through: a set or a map to "
                          f"bool, not {e.type}")

    def _if(self, t, sc: Scope, allow_assign: bool) -> ir.IfStmt:
        return self._nested(self._if_body, t, sc, allow_assign)

    def _do(self, t, sc: Scope, allow_assign: bool) -> list[ir.Stmt]:
        return self._nested(self._do_body, t, sc, allow_assign)

    def _nested(self, check, t, sc: Scope, allow_assign: bool):
        """``check(t, sc, allow_assign)`` one level deeper (see `ExprChecks.nest_deeper`)."""
        try:
            self.nest_deeper(t)
            return check(t, sc, allow_assign)
        finally:
            self.nesting -= 1

    def _if_body(self, t, sc: Scope, allow_assign: bool) -> ir.IfStmt:
        cond = self.bool_expr(t.children[0], sc)
        then, _ = self.stmts(t.children[1].children, sc, allow_assign)
        other: list[ir.Stmt] = []
        if t.children[2] is not None:
            e = t.children[2]
            if e.data == "if_stmt":
                other = [self._if(e, sc, allow_assign)]
            else:
                other, _ = self.stmts(e.children, sc, allow_assign)
        return ir.IfStmt(self.span(t), cond, tuple(then), tuple(other))

    def _do_body(self, t, sc: Scope, allow_assign: bool) -> list[ir.Stmt]:
        name = str(t.children[0])
        args_t = list(t.children[1].children) if t.children[1] is not None else []
        key = ("proc", name)
        if key not in self.items:
            raise self.err(t, f"unknown procedure {name!r}")
        if name in self.inlining:
            raise self.err(t, f"procedure {name} calls itself; procedures may not recurse")
        it = self.items[key]
        d = it.tree
        params = d.children[1].children if d.children[1] is not None else []
        if len(params) != len(args_t):
            raise self.err(t, f"{name} takes {len(params)} argument(s), given {len(args_t)}")
        out: list[ir.Stmt] = []
        inner = Scope({}, sc.frame, sc.old, sc.transition, sc.allow_state)
        saved = self.cursor()
        for a, p in zip(args_t, params):
            self.enter(it)
            try:
                pt = self.type_(p.children[1])
            finally:
                self.goto(saved)
            v = self.coerce(self.expr(a, sc, pt), pt, a)
            slot = sc.frame.new()
            out.append(ir.LetStmt(self.span(a), slot, v))
            inner = inner.bind(str(p.children[0]), ir.Local(pt, self.span(a), str(p.children[0]),
                                                            slot))
        self.inlining.append(name)
        body: list[ir.Stmt] = []
        try:
            # A proc's `extend ... before` blocks run ahead of its body, the others after it;
            # all see the proc's parameters.
            parts = ([x for x in it.extra if self.ext_before(x)] + [it]
                     + [x for x in it.extra if not self.ext_before(x)])
            for part in parts:
                self.enter(part)
                block = d.children[2] if part is it else self.ext_block(part)
                more, inner = self.stmts(block.children, inner, allow_assign)
                body.extend(more)
        finally:
            self.inlining.pop()
            self.goto(saved)
        return out + body

    def _assign(self, t, sc: Scope) -> ir.Assign:
        lv, op_t, val_t = t.children
        name = str(lv.children[0])
        sp = self.span(t)
        assert self.state_type is not None
        fi = self.state_type.index(name)
        if fi is None:
            raise self.err(lv, f"{name!r} is not a state field; only the state can be assigned")
        typ = self.state_type.fields[fi][1]
        path: list = [ir.PathField(fi, self.state_type)]
        read: ir.Expr = ir.Field(typ, sp, ir.StateRef(self.state_type, sp), fi, name)
        for acc in lv.children[1:]:
            if acc.data == "lv_field":
                fname = str(acc.children[0])
                if not isinstance(typ, RecordT) or typ.index(fname) is None:
                    raise self.err(acc, f"{typ} has no field {fname!r}")
                i = typ.index(fname)
                path.append(ir.PathField(i, typ))
                typ = typ.fields[i][1]
                read = ir.Field(typ, sp, read, i, fname)
            else:
                match typ:
                    case MapT(key=k, val=v):
                        key = self.coerce(self.expr(acc.children[0], sc, k), k, acc)
                        path.append(ir.PathIndex(key, typ))
                        typ = v
                    case BagT(elem=e, most=m):
                        key = self.coerce(self.expr(acc.children[0], sc, e), e, acc)
                        path.append(ir.PathIndex(key, typ))
                        typ = IntT(0, m)
                    case SetT(elem=e):
                        key = self.coerce(self.expr(acc.children[0], sc, e), e, acc)
                        path.append(ir.PathIndex(key, typ))
                        typ = BOOL
                    case SeqT(elem=e):
                        key = self.int_expr(acc.children[0], sc)
                        path.append(ir.PathIndex(key, typ))
                        typ = e
                    case _:
                        raise self.err(acc, f"cannot index a {typ}")
                read = ir.Index(typ, sp, read, key)
        op = str(op_t.children[0])
        value = self.expr(val_t, sc, typ)
        if op != "=":
            if not isinstance(typ, IntT) or not isinstance(value.type, IntT):
                if not (isinstance(typ, BagT) and isinstance(value.type, BagT)):
                    raise self.err(t, f"`{op}` needs numbers or bags")
            vt = value.type
            if isinstance(typ, IntT):
                rt = (IntT(typ.lo + vt.lo, typ.hi + vt.hi) if op == "+=" else
                      IntT(typ.lo - vt.hi, typ.hi - vt.lo))
            else:
                rt = BagT(typ.elem, typ.most + (vt.most if op == "+=" else 0))
            value = ir.Binary(rt, sp, op[0], read, value)
        value = self.coerce(value, typ, val_t)
        bag_minus = isinstance(value, ir.Binary) and value.op == "-" and isinstance(typ, BagT)
        bounds = typ if (needs_bounds(value.type, typ) or bag_minus) else None
        return ir.Assign(sp, name, tuple(path), value, bounds, value.type)
