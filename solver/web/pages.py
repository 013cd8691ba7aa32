"""The explorer's HTML: whole pages (index, game, compare, puzzles, errors) and the fragments of
the game page that the script swaps in after each move.  Plain HTML written here with every
value escaped; the style and the script are static files (``static/``)."""
from __future__ import annotations

import json
from html import escape
from urllib.parse import quote, urlencode

from ..lang.errors import RulebookError
from ..render.board import move_marks, move_path
from ..render.render import render_svg

KEYS = [("u / ←", "undo (a puzzle's answer: the previous step)"),
        ("r / →", "redo (a puzzle's answer: the next step)"), ("n", "random move"),
        ("e", "play to the end"),
        ("1–9", "play the legal move of that number"), ("/", "filter the refused moves"),
        ("t", "try a move by its JSON"), ("c", "copy the history as JSON"),
        ("Home", "back to the start"), ("?", "show or hide these keys")]


def esc(x) -> str:
    return escape(str(x), quote=True)


def jtext(j) -> str:
    """A JSON value on one line, as the CLI prints moves."""
    return json.dumps(j, ensure_ascii=False)


def page(title: str, body: str, nav: str = "") -> str:
    keys = "".join(f"<dt><kbd>{esc(k)}</kbd></dt><dd>{esc(v)}</dd>" for k, v in KEYS)
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)} — rulebook explorer</title>"
            "<link rel=\"icon\" href=\"/static/favicon.svg\" type=\"image/svg+xml\">"
            "<link rel=\"stylesheet\" href=\"/static/explorer.css\"></head><body>"
            "<header><nav><a href=\"/\">Games</a> <a href=\"/puzzles\">Puzzles</a>"
            f"{nav}<button type=\"button\" id=\"keys-button\" class=\"link\" "
            "title=\"keyboard shortcuts (?)\">Keys</button></nav>"
            f"<h1>{esc(title)}</h1></header>"
            f"<aside id=\"keys\" hidden><h2>Keyboard</h2><dl>{keys}</dl></aside>"
            "<div id=\"message\" role=\"alert\" class=\"message\" hidden></div>"
            f"<main>{body}</main>"
            "<script src=\"/static/explorer.js\"></script></body></html>\n")


def error_page(status: int, message: str) -> str:
    what = {404: "Not found", 422: "Refused"}.get(status, "Bad input")
    return page(what, f"<p class=\"error\" id=\"error\">{esc(message)}</p>"
                "<p><a href=\"/\">Back to the games</a></p>")


def game_url(opts, start=None, moves=(), cursor=None) -> str:
    """The explorer's page for ``opts``, the start and moves in the fragment."""
    q = opts.query()
    url = f"/games/{quote(opts.game)}" + (f"?{q}" if q else "")
    if start is not None or moves:
        h = {"start": start, "moves": list(moves),
             "cursor": len(moves) if cursor is None else cursor}
        url += "#" + quote(json.dumps(h, separators=(",", ":")), safe="")
    return url


def witness_url(game: str, w: dict) -> str:
    """The compare view of a stored witness (``w``: its reading and options a and b)."""
    return "/compare?" + urlencode([("game", game),
                                    ("witness", f"{w['reading']}:{w['a']}:{w['b']}")])


def compare_url(opts, reading: str, a: str, b: str, state=None) -> str:
    """The compare view of two options of a reading, on ``state`` (None: the initial one)."""
    items = [("game", opts.game)] + [("variant", v) for v in opts.variants] + \
        [(f"param.{k}", str(n)) for k, n in opts.params]
    items += [("reading", reading), ("a", a), ("b", b)]
    if state is not None:
        items.append(("state", json.dumps(state, separators=(",", ":"))))
    return "/compare?" + urlencode(items)


# ---- the index ----------------------------------------------------------------------------

def index_page(games: list[dict], witnesses: dict) -> str:
    from .explore import Options
    rows = []
    for gm in games:
        name = gm["game"]
        opts = Options(name)
        exps = ", ".join(f"<a href=\"{esc(game_url(Options(name, (e,))))}\">{esc(e)}</a>"
                         for e in gm["expansions"]) or "—"
        reads = []
        for r in gm["readings"]:
            opts_ = " | ".join(f"<b>{esc(o['name'])}</b>" if o["name"] == r["default"]
                               else esc(o["name"]) for o in r["options"])
            names = [o["name"] for o in r["options"]]
            cmp_ = f"<a href=\"{esc(compare_url(opts, r['name'], names[0], names[1]))}\">" \
                   "compare</a>" if len(names) > 1 else ""
            reads.append(f"<li><code>{esc(r['name'])}</code>: {opts_} {cmp_}</li>")
        params = ", ".join(f"{esc(p['name'])} = {esc(p['default'])}"
                           + (f" ({esc(p['lo'])}..{esc(p['hi'])})" if p["lo"] is not None
                              else "") for p in gm["params"]) or "—"
        ws = "".join(f"<li><a href=\"{esc(witness_url(name, w))}\">{esc(w['reading'])}: "
                     f"{esc(w['a'])} vs {esc(w['b'])}</a> ({esc(w['disagree_on'])})</li>"
                     for w in witnesses.get(name, []))
        rows.append(
            f"<tr data-game=\"{esc(name)}\"><td><a class=\"game\" href=\"{esc(game_url(opts))}\">"
            f"{esc(gm['title'])}</a><br><code>{esc(name)}</code></td><td>{exps}</td>"
            f"<td><ul>{''.join(reads) or '—'}</ul></td><td>{params}</td>"
            f"<td><ul>{ws or '—'}</ul></td></tr>")
    body = ("<p>Pick a game to play it move by move: every legal move is a button, every "
            "refused move is listed with the rule that refuses it. Readings (the points the "
            "rulebook leaves open) are chosen on the game's page; <b>compare</b> shows two of "
            "them side by side on one state, and each stored witness opens where they "
            "disagree.</p>"
            "<div class=\"scroll\"><table class=\"games\"><thead><tr><th>game</th>"
            "<th>expansions</th><th>readings (default in bold)</th><th>parameters</th>"
            "<th>stored witnesses</th></tr></thead><tbody>" + "".join(rows)
            + "</tbody></table></div>")
    return page("rulebook explorer", body)


# ---- the game page ------------------------------------------------------------------------

def options_form(g, opts, expansions: list[str], seed: int, move: int | None) -> str:
    chosen = set(opts.variants)
    parts = []
    if expansions:
        boxes = "".join(
            f"<label><input type=\"checkbox\" name=\"variant\" value=\"{esc(e)}\""
            f"{' checked' if e in chosen else ''}> {esc(e)}</label>" for e in expansions)
        parts.append(f"<fieldset><legend>Expansions</legend>{boxes}</fieldset>")
    if g.p.readings:
        sels = []
        for r in g.p.readings:
            options_ = "".join(
                f"<option value=\"{esc(r.name)}:{esc(o)}\" title=\"{esc(d)}\""
                f"{' selected' if o == r.chosen else ''}>{esc(o)}"
                f"{' (default)' if o == r.default else ''}</option>" for o, d in r.options)
            sels.append(f"<label title=\"{esc(_doc_text(r.doc))}\">{esc(r.name)} "
                        f"<select name=\"variant\">{options_}</select></label>")
        parts.append(f"<fieldset><legend>Readings</legend>{''.join(sels)}</fieldset>")
    if g.p.params:
        ins = "".join(
            f"<label>{esc(p.name)} <input type=\"number\" name=\"param.{esc(p.name)}\" "
            f"value=\"{esc(g.p.param_values.get(p.name))}\""
            + (f" min=\"{p.type.lo}\" max=\"{p.type.hi}\"" if hasattr(p.type, "lo") else "")
            + "></label>" for p in g.p.params)
        parts.append(f"<fieldset><legend>Parameters</legend>{ins}</fieldset>")
    parts.append("<fieldset><legend>Start</legend>"
                 f"<label>seed <input type=\"number\" name=\"seed\" min=\"0\" value=\"{seed}\">"
                 "</label><label>at move <input type=\"number\" name=\"move\" min=\"0\" "
                 f"value=\"{'' if move is None else move}\" placeholder=\"0\"></label>"
                 "</fieldset>")
    return (f"<details class=\"options\"{' open' if opts.variants or opts.params else ''}>"
            "<summary>Options: expansions, readings, parameters, start</summary>"
            f"<form id=\"options\" method=\"get\" action=\"/games/{esc(quote(opts.game))}\">"
            + "".join(parts) + "<button type=\"submit\">Start a new game</button></form>"
            "</details>")


def _doc_text(doc) -> str:
    return getattr(doc, "text", "") or ""


def game_page(g, opts, expansions, seed, move, frags: dict, init: dict) -> str:
    readings = "".join(
        f"<option value=\"{esc(r.name)}:{esc(a)}:{esc(b)}\">{esc(r.name)}: {esc(a)} vs "
        f"{esc(b)}</option>"
        for r in g.p.readings for i, (a, _) in enumerate(r.options)
        for b, _ in r.options[i + 1:])
    compare = ("<section class=\"panel\"><h2>Compare two readings on this state</h2>"
               "<form id=\"compare-form\" method=\"get\" action=\"/compare\">"
               f"<input type=\"hidden\" name=\"game\" value=\"{esc(opts.game)}\">"
               + "".join(f"<input type=\"hidden\" name=\"variant\" value=\"{esc(v)}\">"
                         for v in opts.variants)
               + "".join(f"<input type=\"hidden\" name=\"param.{esc(k)}\" value=\"{n}\">"
                         for k, n in opts.params)
               + f"<select name=\"pair\" id=\"compare-pair\">{readings}</select> "
               "<button type=\"submit\">Compare</button></form></section>") if readings else ""
    body = (
        options_form(g, opts, expansions, seed, move)
        + "<div class=\"layout\"><section class=\"boardcol\">"
        f"<div id=\"status\" class=\"status\">{frags['status']}</div>"
        f"<div id=\"board\" class=\"board\">{frags['board']}</div></section>"
        "<section class=\"side\"><div class=\"toolbar\" role=\"toolbar\">"
        "<button type=\"button\" id=\"undo\" title=\"undo (u)\">◀ Undo</button>"
        "<button type=\"button\" id=\"redo\" title=\"redo (r)\">Redo ▶</button>"
        "<button type=\"button\" id=\"random\" title=\"a random move (n)\">Random move</button>"
        "<button type=\"button\" id=\"to-end\" title=\"play to the end (e)\">Play to the end"
        "</button><button type=\"button\" id=\"restart\" title=\"back to the start (Home)\">"
        "Start</button></div>"
        f"<section class=\"panel\"><div id=\"legal\">{frags['legal']}</div>"
        "<form id=\"try-form\" class=\"try\"><label for=\"try-move\">Try a move</label> "
        "<input id=\"try-move\" name=\"move\" autocomplete=\"off\" spellcheck=\"false\" "
        "placeholder='[\"action\", argument, ...]'> <button type=\"submit\">Try</button>"
        "</form></section>"
        "<section class=\"panel\"><label for=\"filter\">Filter the refused moves</label> "
        "<input id=\"filter\" autocomplete=\"off\" spellcheck=\"false\" "
        "placeholder='part of a move, e.g. [3,4]'>"
        f"<div id=\"refused\">{frags['refused']}</div></section>"
        f"<section class=\"panel\"><h2>History</h2><div id=\"history\">{frags['history']}</div>"
        "<button type=\"button\" id=\"copy\" title=\"copy (c)\">Copy history JSON</button>"
        "</section>"
        f"{compare}"
        "<section class=\"panel\"><h2>Load</h2><p class=\"hint\">Paste a state (an object of "
        "state fields, as <code>rulebook moves --state</code> reads), a puzzle (as "
        "<code>rulebook solve</code> reads) or a history copied from here.</p>"
        "<form id=\"load-form\"><textarea id=\"paste\" rows=\"5\" spellcheck=\"false\">"
        "</textarea><button type=\"submit\">Load</button></form></section>"
        "</section></div>"
        f"<script type=\"application/json\" id=\"init\">{_script_json(init)}</script>")
    return page(f"{g.p.title} ({opts.game})", body)


def _script_json(obj) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(obj, separators=(",", ":")).replace("<", "\\u003c")


def fragments(g, states, moves, cursor: int, v: dict, last_json) -> dict:
    """The parts of the game page that change with the position (see `explore.view`)."""
    st = states[cursor]
    prev = states[cursor - 1] if cursor else None
    changed = set()
    if prev is not None:
        changed = {f.name for f, x, y in zip(g.p.state, st, prev) if x != y}
    try:
        marks = move_marks(g, last_json) if last_json else ()
        path = move_path(g, last_json, prev) if last_json else ()
    except RulebookError:
        marks, path = (), ()
    title = "start" if cursor == 0 else f"after move {cursor}: {moves[cursor - 1].label(g)}"
    board = render_svg(g, st, highlight=changed or None, title=title, marks=marks, path=path)
    return {"status": status_html(v, cursor, len(moves)), "board": board,
            "legal": legal_html(v), "refused": refused_html(v),
            "history": history_html(g, moves, cursor)}


def status_html(v: dict, cursor: int, total: int) -> str:
    items = [f"<span id=\"position\">move {cursor} of {total}</span>"]
    if v["terminal"]:
        items.append("<b class=\"over\" id=\"game-over\">game over</b>")
    if v["actor"] is not None:
        items.append(f"<span id=\"actor\">to play: player {esc(v['actor'])}</span>")
    if v["phase"]:
        items.append(f"<span id=\"phase\">{esc(v['phase']['field'])}: "
                     f"<code>{esc(jtext(v['phase']['value']))}</code></span>")
    sc = v["scores"]
    if sc:
        if "error" in sc:
            items.append(f"<span id=\"score\">score: {esc(sc['error'])}</span>")
        else:
            s = ", ".join(f"player {i}: {esc(x)}" for i, x in enumerate(sc["score"]))
            win = ""
            if "winners" in sc:
                win = " — winner" + ("s" if len(sc["winners"]) != 1 else "") + ": " + \
                    (", ".join(f"player {w}" for w in sc["winners"]) or "none")
            items.append(f"<span id=\"score\">score: {s}{esc(win)}</span>")
    return " · ".join(items)


def _move_button(mv: dict, cls: str, n: int | None = None, extra: str = "") -> str:
    num = f"<kbd>{n}</kbd> " if n is not None and n <= 9 else ""
    return (f"<button type=\"button\" class=\"move {cls}\" data-move=\"{esc(jtext(mv['move']))}\""
            f"{extra}>{num}{esc(mv['label'])}</button>")


def legal_html(v: dict) -> str:
    legal = v["legal"]
    head = f"<h2>Legal moves <span class=\"count\" id=\"legal-count\">{len(legal)}</span></h2>"
    if not legal:
        return head + "<p class=\"hint\">None" + (": the game is over." if v["terminal"]
                                                    else ".") + "</p>"
    return head + "<div class=\"moves\">" + "".join(
        _move_button(mv, "legal" + (" chance" if mv["chance"] else ""), i,
                     " title=\"a chance outcome\"" if mv["chance"] else "")
        for i, mv in enumerate(legal, 1)) + "</div>"


def refused_html(v: dict) -> str:
    head = (f"<h2>Refused moves <span class=\"count\" id=\"refused-count\">"
            f"{v['refused_total']}</span></h2>")
    if not v["refused"]:
        return head + "<p class=\"hint\">None.</p>"
    out = [head, "<p class=\"hint\">Grouped by action and by the rule that refuses them; "
                 "click one to try it.</p>"]
    flt = v.get("filter")
    for grp in v["refused"]:
        if flt and not grp["matching"]:
            continue
        n = grp["matching"] if flt else grp["count"]
        more = n - len(grp["moves"])
        out.append(
            f"<details class=\"refused-group\" data-rule=\"{esc(grp['rule'])}\" "
            f"data-action=\"{esc(grp['action'])}\"{' open' if flt else ''}><summary>"
            f"<code>{esc(grp['action'])}</code> refused by rule "
            f"<code class=\"rule\">{esc(grp['rule'])}</code>: {esc(grp['why'])} "
            f"<span class=\"count\">{n}{(' of ' + str(grp['count'])) if flt else ''}</span>"
            "</summary>"
            "<div class=\"moves\">" + "".join(
                _move_button(mv, "refused", extra=f" data-rule=\"{esc(grp['rule'])}\"")
                for mv in grp["moves"])
            + (f"<span class=\"hint\">and {more} more (filter to find one)</span>"
               if more > 0 else "") + "</div></details>")
    return "".join(out)


def history_html(g, moves, cursor: int) -> str:
    if not moves:
        return "<p class=\"hint\">No move yet.</p>"
    items = "".join(
        f"<li class=\"{'done' if i < cursor else 'undone'}{' here' if i + 1 == cursor else ''}\">"
        f"<button type=\"button\" class=\"link jump\" data-cursor=\"{i + 1}\">"
        f"{esc(m.label(g))}</button></li>" for i, m in enumerate(moves))
    return (f"<ol class=\"history\" start=\"0\"><li class=\"{'here' if cursor == 0 else 'done'}\">"
            f"<button type=\"button\" class=\"link jump\" data-cursor=\"0\">start</button></li>"
            f"{items}</ol>")


# ---- compare ------------------------------------------------------------------------------

def compare_page(ga, opts, reading: str, a: str, b: str, st, rows: list[dict], same: dict,
                 witness, state_json: dict, scores=(None, None)) -> str:
    from .explore import Options
    decl = next(r for r in ga.p.readings if r.name == reading)
    docs = dict(decl.options)
    wmove = jtext(witness["move"]) if witness and witness.get("move") else None
    pairs = "".join(
        f"<option value=\"{esc(r.name)}:{esc(x)}:{esc(y)}\""
        f"{' selected' if (r.name, x, y) == (reading, a, b) else ''}>{esc(r.name)}: "
        f"{esc(x)} vs {esc(y)}</option>"
        for r in ga.p.readings for i, (x, _) in enumerate(r.options) for y, _ in r.options[i + 1:])
    hidden = "".join(f"<input type=\"hidden\" name=\"variant\" value=\"{esc(v)}\">"
                     for v in opts.variants if v.partition(":")[0] != reading or ":" not in v)
    hidden += "".join(f"<input type=\"hidden\" name=\"param.{esc(k)}\" value=\"{n}\">"
                      for k, n in opts.params)
    hidden += (f"<input type=\"hidden\" name=\"state\" "
               f"value=\"{esc(json.dumps(state_json, separators=(',', ':')))}\">")
    form = (f"<form method=\"get\" action=\"/compare\" class=\"options\">"
            f"<input type=\"hidden\" name=\"game\" value=\"{esc(opts.game)}\">{hidden}"
            f"<label>readings <select name=\"pair\">{pairs}</select></label> "
            "<button type=\"submit\">Compare on this state</button></form>")
    base = Options(opts.game, tuple(v for v in opts.variants
                                    if v.partition(":")[0] != reading or ":" not in v),
                   opts.params)
    play = " ".join(
        f"<a href=\"{esc(game_url(base.with_variant(f'{reading}:{o}'), state_json))}\" "
        f"class=\"play-{side}\">play this state under {esc(o)}</a>"
        for side, o in (("a", a), ("b", b)))
    head = [f"<p class=\"question\">{esc(_doc_text(decl.doc))}</p>",
            f"<dl class=\"readings\"><dt class=\"side-a\">{esc(a)}</dt><dd>{esc(docs.get(a, ''))}"
            f"</dd><dt class=\"side-b\">{esc(b)}</dt><dd>{esc(docs.get(b, ''))}</dd></dl>"]
    if witness:
        head.append(
            "<p class=\"witness\" id=\"witness\">Stored witness"
            + (f": the move <code>{esc(wmove)}</code>" if wmove else "")
            + f" — they disagree about the <b>{esc(witness.get('disagree_on', ''))}</b>. "
            f"Stored: under {esc(a)}: {esc(witness.get('under_a', ''))}; under {esc(b)}: "
            f"{esc(witness.get('under_b', ''))}.</p>")
    try:
        marks = move_marks(ga, witness["move"]) if witness and witness.get("move") else ()
        path = move_path(ga, witness["move"], st) if marks else ()
    except RulebookError:
        marks, path = (), ()
    svg = render_svg(ga, st, title=f"{ga.p.title}: the state compared", marks=marks, path=path)
    kinds = [("legality", "Legal under one reading, refused under the other"),
             ("outcome", "Legal under both, with different results"),
             ("rule", "Refused under both, by different rules")]
    tables = []
    for kind, title in kinds:
        mine = [r for r in rows if r["differs"] == kind]
        tables.append(f"<h2>{esc(title)} <span class=\"count\" id=\"count-{kind}\">{len(mine)}"
                      "</span></h2>" + (_rows_table(mine, a, b, kind, wmove) if mine else
                                        "<p class=\"hint\">None.</p>"))
    legal_both = [r for r in rows if not r["differs"]]
    n_same = sum(same.values())
    agree = (f"<h2>The same under both <span class=\"count\" id=\"count-same\">"
             f"{len(legal_both) + n_same}</span></h2>"
             f"<details><summary>legal under both, same result ({len(legal_both)})</summary>"
             + (_rows_table(legal_both, a, b, "", wmove) if legal_both else "") + "</details>"
             + f"<details><summary>refused under both by the same rule ({n_same})"
             "</summary><ul>" + "".join(
                 f"<li><code>{esc(act)}</code> by <code class=\"rule\">{esc(rule)}</code>: {n}"
                 "</li>" for (act, rule), n in same.items()) + "</ul></details>")
    if scores[0] and scores[1] and "score" in scores[0] and "score" in scores[1]:
        sa, sb = scores
        cells = "".join(
            f"<tr class=\"{'differs differs-legality' if x != y else 'same'}\"><td>player {i}"
            f"</td><td>{esc(x)}</td><td>{esc(y)}</td></tr>"
            for i, (x, y) in enumerate(zip(sa["score"], sb["score"])))
        for key, word in (("winners", "winners"),):
            if key in sa or key in sb:
                x, y = sa.get(key), sb.get(key)
                cells += (f"<tr class=\"{'differs differs-legality' if x != y else 'same'}\">"
                          f"<td>{word}</td><td>{esc(x)}</td><td>{esc(y)}</td></tr>")
        tables.insert(0, "<h2>Scores on this state</h2><div class=\"scroll\"><table "
                      "class=\"compare scores\" id=\"scores\"><thead><tr><th></th>"
                      f"<th class=\"side-a\">under {esc(a)}</th><th class=\"side-b\">under "
                      f"{esc(b)}</th></tr></thead><tbody>{cells}</tbody></table></div>")
    body = (form + "".join(head)
            + "<div class=\"layout\"><section class=\"boardcol\">"
            f"<div class=\"board\" id=\"board\">{svg}</div><p>{play}</p></section>"
            "<section class=\"side\">" + "".join(tables) + agree + "</section></div>")
    return page(f"{ga.p.title}: {reading} — {a} vs {b}", body,
                nav=f" <a href=\"{esc(game_url(base))}\">{esc(ga.p.title)}</a>")


def _rows_table(rows, a: str, b: str, kind: str, wmove) -> str:
    def side(x):
        if x["legal"]:
            return "<td class=\"yes\">legal</td>"
        return (f"<td class=\"no\">refused by <code class=\"rule\">{esc(x['rule'])}</code>"
                f"<br><span class=\"why\">{esc(x['why'])}</span></td>")
    body = "".join(
        f"<tr class=\"{('differs differs-' + kind) if kind else 'same'}"
        f"{' witness-move' if wmove == jtext(r['move']) else ''}\" "
        f"data-move=\"{esc(jtext(r['move']))}\"><td><code>{esc(r['label'])}</code></td>"
        f"{side(r['a'])}{side(r['b'])}</tr>" for r in rows)
    return (f"<div class=\"scroll\"><table class=\"compare\"><thead><tr><th>move</th>"
            f"<th class=\"side-a\">under {esc(a)}</th><th class=\"side-b\">under {esc(b)}</th>"
            f"</tr></thead><tbody>{body}</tbody></table></div>")


# ---- puzzles ------------------------------------------------------------------------------

def puzzles_page(files: list[str], text: str, backend: str, results: list[dict] | None,
                 chosen: str | None) -> str:
    links = "".join(f"<li><a href=\"/puzzles?{esc(urlencode({'file': f}))}\""
                    + (' class="chosen"' if f == chosen else '') + f">{esc(f)}</a></li>"
                    for f in files) or "<li>none (examples/puzzles/ is in a checkout)</li>"
    backends = "".join(f"<option{' selected' if b == backend else ''}>{b}</option>"
                       for b in ("search", "z3"))
    form = ("<form method=\"post\" action=\"/puzzles\" id=\"puzzle-form\" class=\"panel\">"
            "<label for=\"puzzle-text\">Paste a puzzle (the JSON <code>rulebook solve</code> "
            "reads: one puzzle or a list)</label>"
            f"<textarea id=\"puzzle-text\" name=\"text\" rows=\"8\" spellcheck=\"false\">"
            f"{esc(text)}</textarea><label>backend <select name=\"backend\">{backends}"
            "</select></label> <button type=\"submit\">Solve</button></form>")
    out = ["<div class=\"layout\"><section class=\"answers\">"]
    for i, res in enumerate(results or []):
        out.append(_answer_html(i, res))
    if not results:
        out.append("<p class=\"hint\">Pick an example or paste a puzzle: its answer is shown "
                   "here, and its moves can be stepped through on the board.</p>")
    out.append(f"</section><section class=\"side\"><h2>Examples</h2>"
               f"<ul class=\"files\">{links}</ul>{form}</section></div>")
    return page("Puzzles", "".join(out))


def _answer_html(i: int, res: dict) -> str:
    g = res["game"]
    states, moves = res["states"], res["moves"]
    figs = []
    for k, st in enumerate(states):
        title = "start" if k == 0 else f"step {k}: {moves[k - 1].label(g)}"
        svg = render_svg(g, st, title=title)
        figs.append(f"<figure class=\"step\" data-step=\"{k}\"{'' if k == 0 else ' hidden'}>"
                    f"{svg}</figure>")
    mj = [m.to_json(g) for m in moves]
    from .explore import state_json
    link = game_url(res["options"], state_json(g, states[0]), mj, 0)
    steps = "".join(f"<li><button type=\"button\" class=\"link goto\" data-step=\"{k}\">"
                    f"{esc(m.label(g))}</button></li>" for k, m in enumerate(moves, 1))
    stepper = (f"<div class=\"stepper\" data-steps=\"{len(moves)}\">"
               "<button type=\"button\" class=\"prev\">◀ Previous</button> "
               f"<span class=\"at\">start</span> <span class=\"hint\">({len(moves)} step"
               f"{'' if len(moves) == 1 else 's'} in all)</span> "
               "<button type=\"button\" class=\"next\">Next ▶</button></div>"
               f"<ol class=\"steps\">{steps}</ol>") if moves else \
        "<p class=\"hint\">No moves to step through: the answer is shown on the start.</p>"
    return (f"<article class=\"answer\" id=\"answer-{i}\"><h2>{esc(g.p.title)} "
            f"<code>{esc(res['options'].game)}</code></h2>"
            f"<pre class=\"json\">{esc(json.dumps(res['answer'], ensure_ascii=False))}"
            f"</pre>{stepper}<div class=\"board\">{''.join(figs)}</div>"
            f"<p><a href=\"{esc(link)}\" class=\"open\">open in the explorer</a></p></article>")
