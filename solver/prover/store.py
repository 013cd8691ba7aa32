"""The proof store: the verdict of each action path's query of the inductive step, in an
SQLite database keyed by a digest of exactly what that query reads, so that a proof re-checks
only the paths an edit reached.

A path is named by its action's IR digest (with the defs it reaches) and its place among
that action's paths in its case, never by its place among all paths: an edit of another
action leaves its key alone.  Beside it the key holds what every query of the step reads
(`context`): the state's, the actor's and the end's digests, the parameters and readings,
the abstractions of the step and the case split (which change the paths themselves), and
z3's version; then the round's candidates (the invariants assumed and checked, by their own
digests) or, for a transition property, the invariants assumed and the property's digest.
Doc strings, spans and local names are in no digest (`lang.irdigest`): a doc edit re-checks
nothing.

A path that held is a proof whatever tactic found it: it is reused under any step time-out
and with or without length splits.  One that broke a candidate says only that this tactic
did not prove it: it is reused under the same length splitting and a step time-out no longer
than its own.  A time-out is no verdict and is not stored.  The value keeps what the journal
keeps (`journal.Journal`, whose methods this class shares): the candidates that fell and
why, those left out, the symmetry a path followed by, and its cost in seconds.

Beside the paths, one *group* row per action and case (and Houdini candidates, or assumed
invariants and transition property), keyed as its paths are but for their place: how many
paths the action has there, written once every one has a stored verdict (for a transition
property: once every one held).  A re-proof does not build an action whose group row stands
(its paths' verdicts all there and standing for the run): building a case's paths cost a
large board more than checking the few an edit reached.

Safe for concurrent writers (WAL, one short transaction a row, a busy timeout): two proofs
at once.  A proof's Dask workers write nothing: their verdicts come back to its process.  A
file that is no store this rulebook reads is moved aside for a fresh one (`prepare_file`)."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import z3

from ..engine.game import Game
from ..lang.errors import RulebookError
from ..lang.irdigest import part_digests
from ..lang.irshape import shape, strengthens
from ..lang.resources import cache_home
from .options import ProveOptions, under

FORMAT = "1"
# How long a writer waits for another's transaction (ms) before giving up.
BUSY_MS = 60_000
# Keys asked of the database at once.
BATCH = 500


def default_path() -> Path:
    """The store a proof uses unless told: ``$XDG_CACHE_HOME/rulebook/proofs.sqlite``, else
    ``~/.cache/rulebook/proofs.sqlite``."""
    return cache_home() / "proofs.sqlite"


def prepare_file(path) -> str | None:
    """Make ready the store file ``path`` before a proof opens it: its folder made if
    missing; a file there that is no store this rulebook reads (not SQLite, corrupt, a
    database of something else, a store of another format) moved aside to
    ``PATH.bad-N`` (with its WAL files), for a fresh store to take its place.  Returns the
    warning to give (one line naming both files), or None.  A path where no store can be
    made (a directory, a folder that cannot be made) is a `RulebookError`."""
    path = str(path)
    if os.path.isdir(path):
        raise RulebookError(f"{path}: cannot open the proof store (a directory)")
    parent = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as e:
        raise RulebookError(f"{path}: cannot make the proof store's folder {parent} "
                            f"({e.strerror})") from None
    try:
        if os.path.getsize(path) == 0:
            return None
    except OSError:
        return None         # no file yet (or gone): a fresh store
    why = _unusable(path)
    if why is None:
        return None
    n = 1
    while any(os.path.lexists(f"{path}.bad-{n}{x}") for x in ("", "-wal", "-shm")):
        n += 1
    aside = f"{path}.bad-{n}"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return None         # another proof moved it aside first
    except OSError as e:
        raise RulebookError(f"{path}: {why}, and it cannot be moved aside ({e.strerror}); "
                            f"remove it") from None
    for x in ("-wal", "-shm"):
        try:
            os.rename(path + x, aside + x)
        except OSError:
            pass
    return f"warning: {path}: {why}; moved to {aside}, starting a fresh proof store"


def _unusable(path: str) -> str | None:
    """Why the file ``path`` is no proof store this rulebook reads, or None."""
    try:
        db = sqlite3.connect(path, timeout=BUSY_MS / 1000)
    except sqlite3.Error as e:
        raise RulebookError(f"{path}: cannot open the proof store ({e})") from None
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master "
                                            "WHERE type = 'table'")}
        if not tables:
            return None     # a store another proof is making (or an empty database)
        if not {"meta", "verdicts"} <= tables:
            return "not a rulebook proof store (an SQLite database of something else)"
        row = db.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
        if row is None or row[0] != FORMAT:
            return (f"a proof store of another format ({row[0] if row else 'none'}, this "
                    f"rulebook reads {FORMAT})")
        ok = db.execute("PRAGMA quick_check").fetchone()
        if ok is None or ok[0] != "ok":
            return f"the proof store is corrupt ({ok[0] if ok else 'no answer'})"
        return None
    except sqlite3.DatabaseError as e:
        if isinstance(e, sqlite3.OperationalError) and "locked" in str(e):
            raise RulebookError(f"{path}: cannot open the proof store ({e})") from None
        return f"the proof store is unreadable ({e})"
    finally:
        db.close()


def context(game: Game, options: ProveOptions, digests: dict | None = None,
            legacy: bool = False) -> str:
    """The digest of what every step query of ``game`` under ``options`` reads besides its
    own action and invariants.  Not the readings: the program is lowered under them, so what
    they change is in the digests of the parts it changes, and a new reading whose default
    keeps the rules leaves every key as it was.  ``legacy``: the context as it was made
    before (with the readings), which a seed of an older proof may carry (`seed.plant`)."""
    d = part_digests(game.p) if digests is None else digests
    return _sha(json.dumps({
        "format": FORMAT, "game": game.name, "state": d["state"], "actor": d["actor"],
        "terminal": d["terminal"], "params": sorted(game.p.param_values.items()),
        **({"readings": sorted(game.symbols.reading_choices.items())} if legacy else {}),
        "exact_reals": options.exact_reals, "opaque_fix": options.opaque_fixpoints,
        "region_facts": options.region_facts, "split_on": list(options.split_on),
        "z3": z3.get_version_string()}, sort_keys=True, default=str))


class Store:
    """The verdicts of the step's path queries in the SQLite file ``path``, for ``game``
    under ``options``; the methods of `journal.Journal`, which the inductive step and the
    transition properties' step call the same way.  The file is opened (and created, its
    folder too) at once: a path where no store can be made is a `RulebookError` naming it
    before any work, and a file that is no store is moved aside (`prepare_file`, said
    through ``say``).  ``digests``: the program's `part_digests`, where the caller has them
    (another store of the same program's `digests`)."""

    def __init__(self, path, game: Game, options: ProveOptions, say,
                 digests: dict | None = None):
        self.path = str(path)
        self.label = f"store {self.path}"
        self.say = say
        self._digests = part_digests(game.p) if digests is None else digests
        self._ctx = context(game, options, self._digests)
        self._legacy = context(game, options, self._digests, legacy=True)
        # Every abstraction of the step is sound: an action whose every path held under one
        # is held under any.  Such groups are also kept under the context with none
        # (`held_anywhere`), tagged apart from a plain run's own group rows.
        combos = [replace(options, exact_reals=e, opaque_fix=o, region_facts=r)
                  for e in (False, True) for o in (False, True) for r in (False, True)]
        self._any_ctx = "held:" + context(game, combos[0], self._digests)
        self._under = under(options)
        # Each abstraction's context (made now and as older proofs made it) -> its `_under`.
        self._tactic_ctx = {context(game, c, self._digests, legacy=lg): under(c)
                            for c in combos for lg in (False, True)}
        self._split = options.split_lengths
        self._timeout = options.step_timeout_ms
        self._props = [i.name for i in game.p.invariants if i.transition]
        self._actions = [a.name for a in game.p.actions]
        self._ids: dict[tuple, list] = {}   # (kind, case) -> each path's (action digest, k)
        self._conns: dict[int, sqlite3.Connection] = {}     # one per process (`_db`)
        self._shapes = {a.name: shape(a) for a in game.p.actions}
        self._weaker: dict[str, list[str]] = {}     # action -> digests it strengthens
        self._said: set[str] = set()
        self._guard(self._init)
        self.put_shapes(self.shapes())

    # ---- the database ----------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        """This process's connection: a process forked with the store open opens its own
        (the parent's stays untouched in the child)."""
        db = self._conns.get(os.getpid())
        if db is None:
            db = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None)
            db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            self._conns[os.getpid()] = db
        return db

    def _guard(self, fn, *args):
        try:
            return fn(*args)
        except sqlite3.Error as e:
            raise RulebookError(f"{self.path}: {_why(e)}") from None

    def _init(self) -> None:
        said = prepare_file(self.path)
        if said:
            self.say(said)
        db = self._db()
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        # One transaction (another proof that opens the file meanwhile sees no table or
        # all), and a write at once: a file that cannot be written is said before any work.
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, "
                       "value TEXT NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, "
                       "kind TEXT NOT NULL, value TEXT NOT NULL, seconds REAL, "
                       "stored REAL NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS shapes (relaxed TEXT NOT NULL, "
                       "digest TEXT NOT NULL, requires TEXT NOT NULL, "
                       "PRIMARY KEY (relaxed, digest))")
            db.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT,))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _get(self, keys: list[str]) -> dict[str, tuple[dict, float | None]]:
        def get():
            out = {}
            db = self._db()
            for i in range(0, len(keys), BATCH):
                part = keys[i:i + BATCH]
                q = f"SELECT key, value, seconds FROM verdicts WHERE key IN " \
                    f"({','.join('?' * len(part))})"
                for k, v, s in db.execute(q, part):
                    try:
                        out[k] = (json.loads(v), s)
                    except ValueError:
                        pass        # not a verdict: checked again, and then replaced
            return out
        return self._guard(get) if keys else {}

    def get(self, keys: list[str]) -> dict[str, tuple[dict, float | None]]:
        """The rows of ``keys`` that are stored: key -> (value, seconds)."""
        return self._get(keys)

    def put_many(self, rows, replace: bool = True) -> int:
        """Write ``rows`` (key, kind, value, seconds) in one transaction: over a stored row
        with ``replace``, else only where none is (a verdict a run reached is never
        overwritten by a seed's).  The number of rows given."""
        verb = "REPLACE" if replace else "IGNORE"
        now = time.time()
        data = [(k, kind, json.dumps(v, sort_keys=True),
                 None if s is None else round(s, 3), now) for k, kind, v, s in rows]

        def put():
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(f"INSERT OR {verb} INTO verdicts VALUES (?, ?, ?, ?, ?)", data)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        if data:
            self._guard(put)
        return len(data)

    def _put(self, key: str, kind: str, value: dict, seconds: float | None = None) -> None:
        self._guard(lambda: self._db().execute(
            "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?)",
            (key, kind, json.dumps(value, sort_keys=True),
             None if seconds is None else round(seconds, 3), time.time())))

    # ---- keys ------------------------------------------------------------------------------

    def _key(self, *parts, ctx: str | None = None) -> str:
        return _sha(json.dumps([self._ctx if ctx is None else ctx, *parts]))

    def _names(self, names) -> list[str]:
        return sorted(self._digests[f"invariant:{n}"] for n in names)

    @property
    def actions(self) -> list[str]:
        """The names of the game's actions, in its order."""
        return list(self._actions)

    @property
    def context(self) -> str:
        """The run's `context` digest, which every key holds."""
        return self._ctx

    @property
    def contexts(self) -> tuple[str, str]:
        """The contexts a seed of this run may carry: this run's, and the same made as older
        proofs made it (`context`'s ``legacy``)."""
        return self._ctx, self._legacy

    def other_tactic(self, ctx: str) -> bool:
        """Whether ``ctx`` is this run's context under other abstractions of the step: a
        seed of it says which groups held anywhere (`plant`)."""
        return ctx in self._tactic_ctx and ctx not in self.contexts

    def under_of(self, ctx: str) -> list[bool] | None:
        """The abstraction of the step (`under`) whose context, for this run, is ``ctx``;
        None for none."""
        return self._tactic_ctx.get(ctx)

    @property
    def anywhere(self) -> str:
        """The context of the rows of groups held under any abstraction (`_held_by`)."""
        return self._any_ctx

    @property
    def digests(self) -> dict:
        """The program's `part_digests` the keys are made of (a second store of the same
        program takes them instead of hashing it again: a second on Towers)."""
        return self._digests

    def digest(self, part: str) -> str | None:
        """The IR digest of ``part`` (``action:NAME``, ``invariant:NAME``) in this run's
        program, or None."""
        return self._digests.get(part)

    def names(self, invariants) -> list[str]:
        """The digests of the invariants named, as the keys hold them (sorted)."""
        return self._names(invariants)

    def step_key(self, case: int, action: str, k: int, candidates: list[str]) -> str:
        """The key of path ``k`` of the action of digest ``action`` in ``case`` under the
        candidates of digests ``candidates`` (`names`)."""
        return self._key("step", case, action, k, candidates)

    def anywhere_keys(self, kind: str, case: int, action: str, candidates: list[str],
                      assumed: list[str], properties: list[str]) -> list[str]:
        """The keys of the rows saying that every path of the action of digest ``action``
        held in ``case`` under some abstraction (`anywhere`): for the step (``kind``
        "step") under ``candidates``, else for each of ``properties`` from ``assumed``
        (all digests)."""
        if kind == "step":
            return [self._key("group", case, action, candidates, ctx=self._any_ctx)]
        return [self._key("transition-group", case, action, assumed, p, ctx=self._any_ctx)
                for p in properties]

    def group_key(self, case: int, action: str, candidates: list[str]) -> str:
        return self._key("group", case, action, candidates)

    def transition_key(self, case: int, action: str, k: int, assumed: list[str],
                       prop: str) -> str:
        """As `step_key`, for the property of digest ``prop`` from ``assumed``."""
        return self._key("transition", case, action, k, assumed, prop)

    def transition_group_key(self, case: int, action: str, assumed: list[str],
                             prop: str) -> str:
        return self._key("transition-group", case, action, assumed, prop)

    def _paths(self, kind: str, case: int, actions: list[str]) -> list[tuple[str, int]]:
        """Each path's name: its action's digest and its place among that action's paths
        in the case (kept for `record` and `record_transition`, which give the place in
        the case)."""
        seen: dict[str, int] = {}
        out = []
        for a in actions:
            k = seen.get(a, 0)
            seen[a] = k + 1
            out.append((self._digests[f"action:{a}"], k))
        self._ids[(kind, case)] = out
        return out

    def _path(self, kind: str, case: int, at: int, action: str) -> tuple[str, int]:
        ids = self._ids.get((kind, case))
        if ids is None or not 0 <= at < len(ids) \
                or ids[at][0] != self._digests[f"action:{action}"]:
            raise RuntimeError(f"store: path {at} of case {case} recorded before its "
                               f"case's paths were asked for")
        return ids[at]

    def _usable(self, value: dict, broke: bool) -> bool:
        """Whether a stored verdict stands for this run: a proof always; a candidate or
        property that fell only under the same length splitting and a time-out no
        shorter."""
        if not broke:
            return True
        t = value.get("tactic") or {}
        return t.get("split_lengths") == self._split and \
            isinstance(t.get("step_timeout_ms"), int) and t["step_timeout_ms"] >= self._timeout

    def _tactic(self) -> dict:
        return {"split_lengths": self._split, "step_timeout_ms": self._timeout}

    # ---- the inductive step (as `journal.Journal`) -----------------------------------------

    def checked(self, case: int, actions: list[str], candidates) -> dict[int, dict]:
        """The paths of ``case`` whose verdict under ``candidates`` is stored: path number
        -> the candidates it broke, with why."""
        cand = self._names(candidates)
        keys = [self._key("step", case, a, k, cand) for a, k in self._paths("step", case,
                                                                            actions)]
        rows = self._get(keys)
        out: dict[int, dict] = {}
        skipped: dict[int, set] = {}
        for at, key in enumerate(keys):
            if key not in rows:
                continue
            v = rows[key][0]
            fell = v.get("fell") or {}
            if not isinstance(fell, dict) or not self._usable(v, bool(fell)):
                continue
            out[at] = dict(fell)
            skipped[at] = set(v.get("skipped") or ())
        # A path that left out a candidate fallen before it counts only if that candidate
        # falls again here (on a path stored too).
        fallen = {n for fell in out.values() for n in fell}
        return {at: fell for at, fell in out.items() if skipped[at] <= fallen}

    # ---- groups: an action's paths in a case, built together ---------------------------------

    def _held(self, kind: str, case: int, actions: list[str], group_keys, path_key,
              holds) -> dict[str, int]:
        """As `_held_by` under the actions' own digests; an action not held so is held when
        a version of it that it strengthens (`weaker`) is."""
        out = self._held_by({a: self._digests[f"action:{a}"] for a in actions},
                            group_keys, path_key, holds)
        rest = {a: w for a in actions if a not in out and (w := self.weaker(a))}
        for i in range(max(map(len, rest.values()), default=0)):
            tried = {a: w[i] for a, w in rest.items() if a not in out and i < len(w)}
            got = self._held_by(tried, group_keys, path_key, holds)
            for a, n in got.items():
                if a not in self._said:
                    self._said.add(a)
                    self.say(f"store: {a} only asks more than a proved version of it "
                             f"({tried[a]}: its requires imply that version's), whose "
                             f"{n} paths held: not checked again")
            out.update(got)
        return out

    def weaker(self, action: str) -> list[str]:
        """The digests of the other versions of ``action`` the store knows (by their
        shapes, `irshape`) that it strengthens: every move it allows, they allowed."""
        if action not in self._weaker:
            sh = self._shapes[action]
            mine = self._digests[f"action:{action}"]

            def rows():
                return self._db().execute("SELECT digest, requires FROM shapes WHERE "
                                          "relaxed = ?", (sh["relaxed"],)).fetchall()
            out = []
            for d, value in self._guard(rows):
                try:
                    old = {"relaxed": sh["relaxed"], "requires": json.loads(value)}
                except ValueError:
                    continue
                if d != mine and strengthens(sh, old):
                    out.append(d)
            self._weaker[action] = sorted(out)
        return self._weaker[action]

    def put_shapes(self, shapes: dict) -> None:
        """Keep ``shapes`` (action digest -> `irshape.shape`), for `weaker` (over a row of
        the same digest: a shape is a function of it, and a row of an older form is mended)."""
        data = [(sh["relaxed"], d, json.dumps(sh.get("requires"))) for d, sh in shapes.items()
                if isinstance(sh, dict) and isinstance(sh.get("relaxed"), str)]

        def put():
            self._db().executemany("INSERT OR REPLACE INTO shapes VALUES (?, ?, ?)", data)
        if data:
            self._guard(put)
            self._weaker.clear()

    def shapes(self) -> dict[str, dict]:
        """Each action's shape (`irshape.shape`) by its digest, for a seed."""
        return {self._digests[f"action:{a}"]: sh for a, sh in self._shapes.items()}

    def _held_by(self, digest: dict[str, str], group_keys, path_key,
                 holds) -> dict[str, int]:
        """The actions of ``digest`` (action -> the digest its rows are keyed by) whose group
        rows (``group_keys(digest)``: one key per group row the action needs) all say how
        many paths it has in the case, and whose paths' rows (``path_key(digest, k)``: the
        keys of path k) are all present and ``holds``; or whose group rows under `anywhere`
        (``group_keys(digest, ctx=...)``) say that every path held under another abstraction
        of the step: action -> its number of paths (there)."""
        want = {a: group_keys(d) for a, d in digest.items()}
        rows = self._get(sorted({k for ks in want.values() for k in ks}))
        counts: dict[str, int] = {}
        for a, ks in want.items():
            ns = {rows[k][0].get("paths") for k in ks if k in rows}
            if len(ns) == 1 and all(k in rows for k in ks) \
                    and isinstance(n := ns.pop(), int) and n >= 0:
                counts[a] = n
        keys = {a: [k for i in range(n) for k in path_key(digest[a], i)]
                for a, n in counts.items()}
        paths = self._get([k for ks in keys.values() for k in ks])
        out = {a: counts[a] for a, ks in keys.items()
               if all(k in paths and holds(paths[k][0]) for k in ks)}
        # Not held here: held under another abstraction of the step (one row a group).
        anyk = {a: group_keys(d, ctx=self._any_ctx) for a, d in digest.items() if a not in out}
        rows = self._get(sorted({k for ks in anyk.values() for k in ks}))
        for a, ks in anyk.items():
            if any(k in rows and rows[k][0].get("under") == self._under for k in ks):
                continue        # this run's own abstraction: its own rows rule
            ns = {rows[k][0].get("paths") for k in ks if k in rows}
            if len(ns) == 1 and all(k in rows for k in ks) \
                    and isinstance(n := ns.pop(), int) and n >= 0:
                out[a] = n
        return out

    def _record_groups(self, kind: str, built: dict[str, int], group_keys, path_key,
                       holds, held) -> int:
        """A group row for each action of ``built`` (action -> its number of paths in the
        case, every one built) whose every path's row is stored and ``holds``; how many
        actions got theirs."""
        keys = {a: [k for i in range(n) for k in path_key(self._digests[f"action:{a}"], i)]
                for a, n in built.items()}
        rows = self._get([k for ks in keys.values() for k in ks])
        done = 0
        for a, ks in keys.items():
            if all(k in rows and holds(rows[k][0]) for k in ks):
                done += 1
                d = self._digests[f"action:{a}"]
                for g in group_keys(d):
                    self._put(g, kind, {"paths": built[a]})
                if all(held(rows[k][0]) for k in ks):
                    for g in group_keys(d, ctx=self._any_ctx):
                        self._put(g, "anywhere", {"paths": built[a], "under": self._under})
        return done

    # ---- the abstraction each action was proved under ----------------------------------------

    def _rung_key(self, digest: str) -> str:
        return self._key("rung", digest, ctx=self._any_ctx)

    def rungs(self, cases: int, candidates) -> dict[str, list]:
        """Per action of this program (by name), the abstractions of the step (`under`)
        under which its paths held every one of ``candidates`` in each of the ``cases``,
        where the store knows (a group proved here says it; one planted from a seed, the
        seed's ``rungs``, kept by `put_rungs`): what a re-proof of an edited version of it
        tries first (`tactics.first_rung`)."""
        cand = self._names(candidates)
        digest = {a: self._digests[f"action:{a}"] for a in self._actions}
        keys = {(a, ci): self._key("group", ci, d, cand, ctx=self._any_ctx)
                for a, d in digest.items() for ci in range(cases)}
        rows = self._get(sorted(set(keys.values())))
        planted = self._get(sorted({self._rung_key(d) for d in digest.values()}))
        out = {}
        for a, d in digest.items():
            got = [rows[k][0].get("under") for ci in range(cases)
                   if (k := keys[(a, ci)]) in rows]
            got = [u for u in got if unders([u])]
            if len(got) < cases:        # some case held as a seed said: the seed's rungs
                seeded = planted.get(self._rung_key(d))
                got += unders(seeded[0].get("under")) if seeded else []
            if got:
                out[a] = unders(got)
        return out

    def put_rungs(self, proved: dict[str, list]) -> None:
        """Add ``proved`` (action digest -> the abstractions its groups held under, from a
        seed) to what the store knows (`rungs`)."""
        keys = {d: self._rung_key(d) for d in proved}
        rows = self._get(sorted(keys.values()))
        out = []
        for d, new in proved.items():
            old = rows[keys[d]][0].get("under") if keys[d] in rows else None
            both = unders([*unders(old), *unders(new)])
            if both != unders(old):
                out.append((keys[d], "rung", {"under": both}, None))
        self.put_many(out)

    def decided_groups(self, case: int, actions: list[str], candidates) -> dict[str, list]:
        """The actions of ``actions`` whose group row in ``case`` under ``candidates``
        stands (`record_groups`) and whose every path's verdict is stored and stands for
        this run: action -> each path's candidates broken, with why ({} when it held).  They
        need not even be built.  A path that left out a candidate fallen before it counts
        only if that candidate falls among these verdicts, as in `checked`."""
        cand = self._names(candidates)
        digest = {a: self._digests[f"action:{a}"] for a in actions}
        gkeys = {a: self._key("group", case, digest[a], cand) for a in actions}
        rows = self._get(list(gkeys.values()))
        counts = {a: rows[k][0].get("paths") for a, k in gkeys.items() if k in rows}
        keys = {a: [self._key("step", case, digest[a], k, cand) for k in range(n)]
                for a, n in counts.items() if isinstance(n, int) and n >= 0}
        paths = self._get([k for ks in keys.values() for k in ks])
        out: dict[str, list] = {}
        for a, ks in keys.items():
            got = []
            for k in ks:
                v = paths[k][0] if k in paths else None
                fell = None if v is None else v.get("fell") or {}
                if not isinstance(fell, dict) or not self._usable(v, bool(fell)):
                    break
                got.append((dict(fell), set(v.get("skipped") or ())))
            else:
                out[a] = got
        # An action a version of which it strengthens held every candidate, or whose every
        # path held under another abstraction of the step: held too (over a fall here,
        # which such an abstraction may have made up).
        for a, n in self.held_groups(case, [a for a in actions if a not in out or any(
                fell for fell, _ in out[a])], candidates).items():
            out[a] = [({}, set())] * n
        while True:     # drop the groups that left out a candidate falling in no other
            fallen = {n for got in out.values() for fell, _ in got for n in fell}
            keep = {a: got for a, got in out.items()
                    if all(skipped <= fallen for _, skipped in got)}
            if len(keep) == len(out):
                return {a: [fell for fell, _ in got] for a, got in keep.items()}
            out = keep

    def held_groups(self, case: int, actions: list[str], candidates) -> dict[str, int]:
        """The actions of ``actions`` whose every path in ``case`` held every one of
        ``candidates`` in a previous run, none left out, each with its number of paths."""
        cand = self._names(candidates)
        return self._held("group", case, actions,
                          lambda a, ctx=None: [self._key("group", case, a, cand, ctx=ctx)],
                          lambda a, k: [self._key("step", case, a, k, cand)], _step_held)

    def record_groups(self, case: int, built: dict[str, int], candidates) -> int:
        """After a Houdini round of ``case``: a group row for each action of ``built``
        (action -> its paths, all built) whose every path's verdict is stored (a time-out
        is none); how many."""
        cand = self._names(candidates)
        return self._record_groups("group", built,
                                   lambda a, ctx=None: [self._key("group", case, a, cand,
                                                                  ctx=ctx)],
                                   lambda a, k: [self._key("step", case, a, k, cand)],
                                   lambda v: isinstance(v.get("fell", {}), dict), _step_held)

    def case_done(self, case: int, candidates) -> int | None:
        """The number of paths of ``case`` when every action's group held every one of
        ``candidates`` (`held_groups`), else None."""
        held = self.held_groups(case, self._actions, candidates)
        return sum(held.values()) if len(held) == len(self._actions) else None

    def record_case(self, case: int, candidates, paths: int) -> None:
        """Nothing: `record_groups` keeps what a case-level row kept, per action."""

    def record(self, case: int, at: int, action: str, candidates, fell: dict,
               skipped: list, by: str | None = None, seconds: float | None = None) -> None:
        a, k = self._path("step", case, at, action)
        self._put(self._key("step", case, a, k, self._names(candidates)), "step",
                  {"fell": fell, "skipped": sorted(skipped), "tactic": self._tactic(),
                   **({"by": by} if by else {})}, seconds)

    def spent(self, case: int, actions: list[str], candidates) -> dict[str, list]:
        """Per action, [paths, seconds] of the proofs stored for ``case`` under
        ``candidates`` that say how long they took."""
        cand = self._names(candidates)
        ids = self._paths("step", case, actions)
        keys = [self._key("step", case, a, k, cand) for a, k in ids]
        rows = self._get(keys)
        out: dict[str, list] = {}
        for action, key in zip(actions, keys):
            row = rows.get(key)
            if row is not None and row[1] is not None and "by" not in row[0]:
                t_ = out.setdefault(action, [0, 0.0])
                t_[0] += 1
                t_[1] += row[1]
        return out

    # ---- the transition properties' step ---------------------------------------------------

    def _tkey(self, case: int, a: str, k: int, assumed: list, prop: str) -> str:
        return self._key("transition", case, a, k, assumed, self._digests[f"invariant:{prop}"])

    def transitions_checked(self, case: int, actions: list[str], assumed) -> dict[int, dict]:
        """The transition verdicts stored for the paths of ``case`` from the same
        ``assumed`` invariants: path number -> {property: None (holds there) or why it
        fails}."""
        names = self._names(assumed)
        keys = [[(p, self._tkey(case, a, k, names, p)) for p in self._props]
                for a, k in self._paths("transition", case, actions)]
        rows = self._get([key for per in keys for _, key in per])
        out: dict[int, dict] = {}
        for at, per in enumerate(keys):
            for p, key in per:
                if key in rows:
                    v = rows[key][0]
                    why = v.get("verdict")
                    if self._usable(v, why is not None):
                        out.setdefault(at, {})[p] = why
        return out

    def record_transition(self, case: int, at: int, action: str, assumed,
                          verdicts: dict, by: str | None = None) -> None:
        a, k = self._path("transition", case, at, action)
        names = self._names(assumed)
        for p, why in verdicts.items():
            self._put(self._tkey(case, a, k, names, p), "transition",
                      {"verdict": why, "tactic": self._tactic(), **({"by": by} if by else {})})

    def _tgroups(self, case: int, assumed: list, properties):
        def group_keys(a, ctx=None):
            return [self._key("transition-group", case, a, assumed,
                              self._digests[f"invariant:{p}"], ctx=ctx) for p in properties]

        def path_key(a, k):
            return [self._tkey(case, a, k, assumed, p) for p in properties]
        return group_keys, path_key

    def transition_held_groups(self, case: int, actions: list[str], assumed,
                               properties) -> dict[str, int]:
        """The actions of ``actions`` whose every path in ``case`` held each of
        ``properties`` from the same ``assumed`` invariants in a previous run, each with its
        number of paths."""
        if not properties:
            return {}
        return self._held("transition-group", case, actions,
                          *self._tgroups(case, self._names(assumed), properties),
                          lambda v: v.get("verdict") is None)

    def record_transition_groups(self, case: int, built: dict[str, int], assumed,
                                 properties) -> int:
        """After the transition pass of ``case``: a group row for each action of ``built``
        whose every path held each of ``properties``; how many."""
        if not properties:
            return 0
        held = (lambda v: v.get("verdict") is None)
        return self._record_groups("transition-group", built,
                                   *self._tgroups(case, self._names(assumed), properties),
                                   held, held)

    def transition_case_done(self, case: int, assumed, properties) -> int | None:
        """The number of paths of ``case`` when a previous run found each of
        ``properties`` holding on every one, from the same ``assumed`` invariants."""
        held = self.transition_held_groups(case, self._actions, assumed, properties)
        return sum(held.values()) if properties and len(held) == len(self._actions) \
            else None

    def record_transition_case(self, case: int, assumed, properties, paths: int) -> None:
        """Nothing: `record_transition_groups` keeps it, per action."""


def unders(value) -> list[list[bool]]:
    """The abstractions (`under`) a stored or seeded list holds, each once, sorted; what is
    not one is left out."""
    if not isinstance(value, list):
        return []
    return [list(u) for u in sorted({tuple(u) for u in value if isinstance(u, list)
                                     and len(u) == 3 and all(isinstance(x, bool) for x in u)})]


def _step_held(value: dict) -> bool:
    """Whether a step path's stored verdict says it held every candidate, none left out."""
    return not value.get("fell") and not value.get("skipped")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _why(e: sqlite3.Error) -> str:
    msg = str(e)
    if "not a database" in msg or "malformed" in msg:
        return f"the proof store is unreadable ({msg}); remove it to start afresh"
    return f"cannot use the proof store ({msg})"
