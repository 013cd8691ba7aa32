"""The program's units: the state, `init`, actions, invariants, `terminal` and `actor`,
examples, puzzles and `rotate`, gathered into an `ir.Program` (a mixin of
`check.Checker`)."""
from __future__ import annotations

from . import ir
from .check_decls import Item
from .errors import InputError, RulebookError, Span, SpecError, VariantError
from .scope import Frame, Scope
from .sources import gc_paused, string
from .types import EnumT, IntT, MapT, RecordT, Type


class ProgramChecks:
    """The units of `Checker`'s program, each checked in its own frame."""

    # ---- the program ---------------------------------------------------------------------

    def state_only(self):
        """The state's type, checking only what it depends on (the static declarations and
        the state): for a tool that asks how large a state is under some parameters."""
        for key in self.order:
            if key[0] == "static":
                self.static_value(key[1], self.items[key].tree)
        self._check_choices()
        self._state()
        return self.state_type

    @gc_paused()
    def program(self) -> ir.Program:
        # Static declarations first, in order (parameters before the types that use them).
        self.state_only()
        types = {k[1]: v[1] for k in self.order if k[0] == "static"
                 for v in [self.static[k[1]]] if v[0] == "type"}
        init, init_frame = self._init()
        actions = tuple(self._action(self.items[k]) for k in self.order if k[0] == "action")
        invariants = tuple(self._invariant(self.items[k]) for k in self.order
                           if k[0] == "invariant")
        terminal, terminal_frame = self._single("terminal")
        actor, actor_frame = self._single("actor")
        examples = tuple(self._example(self.items[k]) for k in self.order if k[0] == "example")
        puzzles = tuple(self._puzzle(self.items[k]) for k in self.order if k[0] == "puzzle")
        for k in self.order:
            if k[0] == "def":
                self._check_def(self.items[k])
        defs = {k[1]: self.items[k] for k in self.order if k[0] in ("def", "proc")}
        docs = {f"{k[0]}:{k[1]}": self.items[k].doc for k in self.order}
        base = self.files[0]
        return ir.Program(
            name=base.game, title=base.title, files=tuple(f.path for f in self.files),
            params=tuple(self.params), param_values=dict(self.param_values),
            readings=tuple(self.readings.values()), types=types, state=tuple(self.state_fields),
            state_type=self.state_type, init=tuple(init), init_frame=init_frame,
            actions=actions, defs=defs, invariants=invariants, examples=examples,
            puzzles=puzzles, terminal=terminal, actor=actor, docs=docs,
            rotate=self._rotate(types), terminal_frame=terminal_frame, actor_frame=actor_frame)

    def program_errors(self) -> list[RulebookError]:
        """Check the units of `program` one by one, going on after an error (an editor shows
        them all): the errors found, each once, in the order of the units.  Every unit after
        the state reads it, so checking stops when the state does not check."""
        errors: list[RulebookError] = []
        seen: set = set()

        def attempt(check, *args) -> bool:
            try:
                check(*args)
                return True
            except RulebookError as e:
                key = (str(e.span), e.message)
                if key not in seen:
                    seen.add(key)
                    errors.append(e)
                self.inlining.clear()
                return False

        for key in self.order:
            if key[0] == "static":
                attempt(self.static_value, key[1], self.items[key].tree)
        if not attempt(self._state):
            return errors
        attempt(self._init)
        units = {"action": self._action, "invariant": self._invariant,
                 "example": self._example, "puzzle": self._puzzle, "def": self._check_def}
        for key in self.order:
            if key[0] in units:
                attempt(units[key[0]], self.items[key])
        attempt(self._single, "terminal")
        attempt(self._single, "actor")
        types = {k[1]: v[1] for k in self.order if k[0] == "static"
                 for v in [self.static.get(k[1])] if v is not None and v[0] == "type"}
        attempt(self._rotate, types)
        return errors

    def _check_choices(self) -> None:
        """Every parameter set and reading chosen from outside must be one the game declares."""
        game = self.files[0].game
        for name in self.param_overrides:
            if name not in self.param_values:
                known = ", ".join(p.name for p in self.params) or "none"
                raise InputError(f"parameter {name!r}: {game} has no such parameter "
                                 f"(parameters: {known})")
        for name, opt in self.reading_choices.items():
            if name not in self.readings:
                known = "; ".join(f"{r.name}:{'|'.join(o for o, _ in r.options)}"
                                  for r in self.readings.values()) or "none"
                raise VariantError(f"variant '{name}:{opt}': {game} has no reading {name!r} "
                                   f"(readings: {known})", name)

    def _rotate(self, types: dict) -> ir.Rotate | None:
        """`rotate Player(piece): f, ...;`: Player a type of the integers from 0, piece a def
        of one Player giving an enum's value, each field a Player or a table keyed by one."""
        it = self.items.get(("rotate", "rotate"))
        if it is None:
            return None
        self.enter(it)
        type_t, def_t, *field_ts = it.tree.children
        pt = types.get(str(type_t))
        if not isinstance(pt, IntT) or pt.lo != 0 or pt.hi < 1:
            raise self.err(type_t, f"`rotate {type_t}`: {type_t} must be a `type` of the "
                           f"integers from 0 (the players), at least two of them")
        d = self.items.get(("def", str(def_t)))
        params = [] if d is None or d.tree.children[1] is None else d.tree.children[1].children
        if d is not None:
            self.enter(d)
            ptypes = [self.type_(p.children[1]) for p in params]
            ret = self.type_(d.tree.children[2]) if d.tree.children[2] is not None else None
            self.enter(it)
        if d is None or ptypes != [pt] or not isinstance(ret, EnumT):
            raise self.err(def_t, f"`rotate {type_t}({def_t})`: {def_t} must be a def of one "
                           f"{type_t} whose type is an enum (the players' pieces)")
        state = dict(self.state_type.fields)
        names = []
        for f in field_ts:
            ft = state.get(str(f))
            if ft is None:
                raise self.err(f, f"`rotate`: no state field named {str(f)!r}")
            if ft != pt and not (isinstance(ft, MapT) and ft.key == pt):
                raise self.err(f, f"`rotate`: state field {str(f)!r} is neither a {type_t} nor "
                               f"a table keyed by {type_t} (it is {ft})")
            if str(f) in names:
                raise self.err(f, f"`rotate`: {str(f)!r} is named twice")
            names.append(str(f))
        return ir.Rotate(str(type_t), pt.hi + 1, ret.name, str(def_t), tuple(names),
                         self.span(it.tree))

    def _check_def(self, it: Item) -> None:
        """Type-check a def's body on its own (calls check it again where they inline it)."""
        self.enter(it)
        d = it.tree
        frame = Frame()
        sc = Scope({}, frame)
        for p in (d.children[1].children if d.children[1] is not None else []):
            pt = self.type_(p.children[1])
            sc = sc.bind(str(p.children[0]), ir.Local(pt, self.span(p), str(p.children[0]),
                                                      frame.new()))
        ret = self.type_(d.children[2]) if d.children[2] is not None else None
        self.inlining.append(it.name)
        try:
            body = self.expr(d.children[3], sc, ret)
        finally:
            self.inlining.pop()
        if ret is not None:
            self.coerce(body, ret, d.children[3])

    def _state(self) -> None:
        it = self.items.get(("state", "state"))
        if it is None:
            raise SpecError("the game declares no `state { ... }`", Span(self.files[0].path, 1, 1))
        fields = []
        seen: dict[str, Span] = {}
        for part in [it, *it.extra]:
            self.enter(part)
            for f in part.tree.children:
                doc_t, internal_t, name_t, type_t = f.children
                doc = ir.Doc(string(doc_t.children[0]),
                             string(doc_t.children[1]) if doc_t.children[1] else "") \
                    if doc_t is not None else ir.Doc()
                name = str(name_t)
                if name in seen:
                    raise self.err(name_t, f"state field {name!r} is already declared at "
                                   f"{seen[name]}")
                seen[name] = self.span(name_t)
                typ = self.type_(type_t)
                fields.append(ir.StateFieldDecl(name, typ, doc, self.span(f),
                                                internal_t is not None))
        self.state_fields = fields
        self.state_type = RecordT("State", tuple((f.name, f.type) for f in fields))

    def _init(self) -> tuple[list[ir.Stmt], int]:
        frame = Frame()
        out: list[ir.Stmt] = []
        it = self.items.get(("init", "init"))
        if it is None:
            return out, 0
        for part in [it, *it.extra]:
            self.enter(part)
            block = part.tree.children[0] if part is it else self.ext_block(part)
            body, _ = self.stmts(block.children, Scope({}, frame))
            out.extend(body)
        return out, frame.size

    def _single(self, kind: str):
        """The expression of `terminal` or `actor` and the slots it needs (the lets and calls
        inlined in it), or (None, 0) when the game has none."""
        it = self.items.get((kind, kind))
        if it is None:
            return None, 0
        self.enter(it)
        frame = Frame()
        return self.expr(it.tree.children[0], Scope({}, frame)), frame.size

    def _action(self, it: Item) -> ir.Action:
        self.enter(it)
        t = it.tree
        kind = str(t.children[0].children[0])
        name = str(t.children[1])
        frame = Frame()
        sc = Scope({}, frame)
        binders = []
        for b in (t.children[2].children if t.children[2] is not None else []):
            dom = self.domain(b.children[1], sc)
            slot = frame.new()
            bn = str(b.children[0])
            binders.append(ir.Binder(bn, slot, dom))
            sc = sc.bind(bn, ir.Local(dom.elem, self.span(b), bn, slot))
        weight = None
        if t.children[3] is not None:
            if kind != "chance":
                raise self.err(t.children[3], "only a `chance` action has a weight")
            weight = self.int_expr(t.children[3], sc)
        # `extend a before` blocks run first, in file order, and their lets are visible to the
        # body; the other `extend` blocks are appended after it.
        body: list[ir.Stmt] = []
        sc2 = sc
        before = [x for x in it.extra if self.ext_before(x)]
        for ext in before:
            self.enter(ext)
            more, sc2 = self.stmts(self.ext_block(ext).children, sc2)
            body.extend(more)
        self.enter(it)
        more, sc2 = self.stmts(t.children[4].children, sc2)
        body.extend(more)
        source = "\n".join([self._source(x) for x in before] + [self._source(it)])
        for ext in it.extra:
            if self.ext_before(ext):
                continue
            self.enter(ext)
            more, sc2 = self.stmts(self.ext_block(ext).children, sc2)
            body.extend(more)
            source += "\n" + self._source(ext)
        return ir.Action(name, kind == "chance", tuple(binders), weight, tuple(body), frame.size,
                         it.doc, self.span(t, it.file), source)

    def _invariant(self, it: Item) -> ir.Invariant:
        self.enter(it)
        frame = Frame()
        trans = it.tree.data == "transition_decl"
        e = self.bool_expr(it.tree.children[1], Scope({}, frame, transition=trans))
        return ir.Invariant(it.name, e, frame.size, trans, it.doc, self.span(it.tree),
                            self._source(it))

    def _action_call(self, t, sc: Scope) -> ir.ActionCall:
        name = str(t.children[0])
        args_t = list(t.children[1].children) if t.children[1] is not None else []
        key = ("action", name)
        if key not in self.items:
            raise self.err(t, f"unknown action {name!r}")
        a = self._action_sig(name)
        if len(a) != len(args_t):
            raise self.err(t, f"{name} takes {len(a)} argument(s), given {len(args_t)}")
        args = tuple(self.coerce(self.expr(x, sc, pt), pt, x) for x, pt in zip(args_t, a))
        return ir.ActionCall(name, args, self.span(t))

    def _action_sig(self, name: str) -> list[Type]:
        it = self.items[("action", name)]
        saved = self.cursor()
        self.enter(it)
        try:
            sc = Scope({}, Frame())
            out = []
            for b in (it.tree.children[2].children if it.tree.children[2] is not None else []):
                dom = self.domain(b.children[1], sc)
                out.append(dom.elem)
                sc = sc.bind(str(b.children[0]), ir.Local(dom.elem, Span("", 0, 0),
                                                          str(b.children[0]), 0))
            return out
        finally:
            self.goto(saved)

    def _example(self, it: Item) -> ir.Example:
        self.enter(it)
        frame = Frame()
        sc = Scope({}, frame)
        setup: list[ir.Stmt] = []
        script: list = []
        with_ = it.tree.children[1]
        settings_l: list[tuple[str, int]] = []
        chosen: list[tuple[str, str]] = []
        for ps in (with_.children if with_ is not None else []):
            pname, val = str(ps.children[0]), ps.children[1]
            if val.type == "INT":
                if pname not in self.param_values:
                    raise self.err(ps, f"{pname!r} is not a parameter of the game")
                settings_l.append((pname, int(val)))
                continue
            # `with reading = option`: the example runs under that reading.
            self.static_value(pname, ps)
            r = self.readings.get(pname)
            if r is None:
                raise self.err(ps, f"{pname!r} is not a reading of the game (`with` sets a "
                               f"parameter to a number or a reading to one of its options)")
            if str(val) not in [o for o, _ in r.options]:
                raise self.err(val, f"reading {pname} has no option {str(val)!r} (options: "
                               f"{', '.join(o for o, _ in r.options)})")
            chosen.append((pname, str(val)))
        settings = tuple(settings_l)
        for c in it.tree.children[2:]:
            self.enter(it)
            match c.data:
                case "from_clause":
                    body, sc = self.stmts(c.children[0].children, sc)
                    setup.extend(body)
                case "do_clause":
                    script.extend(self._action_call(x, sc) for x in c.children)
                case "expect_value":
                    script.append(ir.Expect("value", self.bool_expr(c.children[0], sc), None,
                                             None, self.span(c), self._slice(c)))
                case "expect_legal":
                    script.append(ir.Expect("legal", None, self._action_call(c.children[0], sc),
                                             None, self.span(c), self._slice(c)))
                case "expect_illegal":
                    because = str(c.children[1]) if c.children[1] is not None else None
                    script.append(ir.Expect("illegal", None,
                                             self._action_call(c.children[0], sc), because,
                                             self.span(c), self._slice(c)))
        return ir.Example(it.name, tuple(setup), tuple(script), frame.size, settings, it.doc,
                          self.span(it.tree), tuple(chosen))

    def _slice(self, node) -> str:
        m = node.meta
        return self.cursor()[1][m.start_pos:m.end_pos] if not m.empty else ""

    def _puzzle(self, it: Item) -> ir.Puzzle:
        self.enter(it)
        frame = Frame()
        sc = Scope({}, frame)
        inputs: list[ir.PuzzleInput] = []
        checks: list[ir.Check] = []
        queries: list[ir.Query] = []
        # `extend puzzle` adds inputs and checks, and `using`/`from` items to every query.  The
        # queries are compiled last so that they see every input, the extension's included.
        clauses = [(it, c) for c in it.tree.children[1:]]
        clauses += [(x, c) for x in it.extra for c in x.tree.children[1:]
                    if c.data in ("input_clause", "puzzle_check")]
        extra_items = [(x, c, None) for x in it.extra for c in x.tree.children[1:]
                       if c.data in ("using_item", "from_clause")]
        base_whens = {str(c.children[0]) if c.children[0] is not None else None
                      for c in it.tree.children[1:] if c.data == "query_clause"}
        for x in it.extra:
            for c in x.tree.children[1:]:
                if c.data != "query_clause":
                    continue
                when = str(c.children[0]) if c.children[0] is not None else None
                if when not in base_whens:
                    self.enter(x)
                    raise self.err(c, f"`extend puzzle {it.name}`: the puzzle has no query "
                                   + (f"`when {when}`" if when else "without `when`"))
                for q in c.children[1:]:
                    if q.data not in ("using_item", "from_clause"):
                        self.enter(x)
                        raise self.err(q, "an `extend puzzle` query adds only `using` and "
                                       "`from` items")
                    extra_items.append((x, q, ("when", when)))
        clauses.sort(key=lambda pc: pc[1].data == "query_clause")
        for part, c in clauses:
            self.enter(part)
            match c.data:
                case "input_clause":
                    name = str(c.children[0])
                    typ = self.type_(c.children[1])
                    dflt_kind = c.children[2]
                    dflt = None
                    if c.children[3] is not None:
                        dflt = self.coerce(self.expr(c.children[3], sc, typ), typ, c.children[3])
                    slot = frame.new()
                    is_param = name in self.param_values
                    sc = sc.bind(name, ir.Local(typ, self.span(c), name, slot))
                    ichecks = tuple(self._check(x, sc) for x in c.children[4:])
                    optional = dflt_kind is not None and str(dflt_kind.children[0]) == "?="
                    inputs.append(ir.PuzzleInput(name, typ, dflt, optional, is_param, slot,
                                                 ichecks, self.span(c)))
                case "puzzle_check":
                    checks.append(self._check(c.children[0], sc))
                case "query_clause":
                    when = str(c.children[0]) if c.children[0] is not None else None
                    mine = [(x, q) for x, q, w in extra_items if w is None or w == ("when", when)]
                    queries.append(self._query(c, sc, inputs, mine))
                    self.enter(it)
        return ir.Puzzle(it.name, tuple(inputs), tuple(checks), tuple(queries), frame.size,
                         it.doc, self.span(it.tree))

    def _check(self, c, sc: Scope) -> ir.Check:
        return ir.Check(str(c.children[0]), string(c.children[1]),
                        self.bool_expr(c.children[2], sc), self.span(c))

    def _query(self, c, sc: Scope, inputs, extra_items=()) -> ir.Query:
        when = str(c.children[0]) if c.children[0] is not None else None
        if when is not None and when not in {i.name for i in inputs if i.optional}:
            raise self.err(c, f"`when {when}` must name an optional input (declared with ?=)")
        choose = None
        setup: list[ir.Stmt] = []
        goal = maximize = within = bound = None
        answers: list[tuple[str, str]] = []
        using: list[str] = []
        pins: list = []
        owner = self.cursor()
        items = [(None, q) for q in c.children[1:]] + list(extra_items)
        for part, q in items:
            if part is not None:
                self.enter(part)
            else:
                self.goto(owner)
            match q.data:
                case "choose_item":
                    dom = self.domain(q.children[1], sc, allow_subbags=True)
                    slot = sc.frame.new()
                    name = str(q.children[0])
                    choose = ir.Binder(name, slot, dom)
                    sc = sc.bind(name, ir.Local(dom.elem, self.span(q), name, slot))
                case "from_clause":
                    body, sc = self.stmts(q.children[0].children, sc)
                    setup.extend(body)
                case "goal_item":
                    goal = self.bool_expr(q.children[0], sc)
                case "maximize_item":
                    maximize = self.int_expr(q.children[0], sc)
                case "bound_item":
                    bound = (self.int_expr(q.children[0], sc), q)
                case "within_item":
                    within = self.int_expr(q.children[0], sc)
                case "answer_item":
                    answers.append((str(q.children[0]), str(q.children[1].children[0])))
                case "using_item":
                    for u in q.children:
                        n = u.children[0]
                        if ("action", str(n)) not in self.items:
                            raise self.err(n, f"unknown action {str(n)!r}")
                        using.append(str(n))
                        if u.children[1] is not None:
                            pins.append((str(n), self._pins(u, sc)))
        if goal is None or within is None:
            raise self.err(c, "a query needs `goal:` and `within:`")
        if bound is not None and maximize is None:
            raise self.err(bound[1], "`bound:` bounds the objective: it needs `maximize:`")
        return ir.Query(when, choose, tuple(setup), goal, maximize, within, tuple(answers),
                        tuple(using), self.span(c), bound[0] if bound else None, tuple(pins))

    def _pins(self, u, sc: Scope) -> tuple:
        """`using move(piece, _)`: the value each argument of the action must equal, or None
        for `_` (any).  The values are read on the query's start, not on the state a move
        is made from."""
        name = str(u.children[0])
        args_t = list(u.children[1].children)
        sig = self._action_sig(name)
        if len(sig) != len(args_t):
            raise self.err(u, f"{name} takes {len(sig)} argument(s), given {len(args_t)}")
        if all(self._is_any(x) for x in args_t):
            raise self.err(u, f"`using {name}(_, ...)` pins no argument: write `using {name}`")
        return tuple(None if self._is_any(x) else self.coerce(self.expr(x, sc, pt), pt, x)
                     for x, pt in zip(args_t, sig))

    @staticmethod
    def _is_any(t) -> bool:
        return getattr(t, "data", None) == "var" and str(t.children[0]) == "_"

    @staticmethod
    def _source(it) -> str:
        m = it.tree.meta
        return it.text[m.start_pos:m.end_pos] if not m.empty else ""
