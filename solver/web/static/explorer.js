// The rulebook explorer's script: no framework, no build step.  The game page keeps its
// position here (the start state, the moves, how many are played) and in the URL's fragment;
// every action posts it to the server, which replays it and answers the page's new parts.
(function () {
  "use strict";
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };

  var msgTimer = null;
  function message(text, kind) {
    var box = $("#message");
    if (!box) return;
    clearTimeout(msgTimer);
    if (!text) { box.hidden = true; box.textContent = ""; return; }
    box.textContent = text;
    box.className = "message" + (kind === "info" ? " info" : "");
    box.hidden = false;
    if (kind === "info") msgTimer = setTimeout(function () { box.hidden = true; }, 4000);
  }

  function typing(ev) {
    var t = ev.target;
    return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" ||
                 t.isContentEditable);
  }

  var keysButton = $("#keys-button");
  function toggleKeys() { var k = $("#keys"); if (k) k.hidden = !k.hidden; }
  if (keysButton) keysButton.addEventListener("click", toggleKeys);

  // ---- the game page ------------------------------------------------------------------------
  var initEl = $("#init");
  if (initEl) gamePage(JSON.parse(initEl.textContent));

  function gamePage(init) {
    var pos = { start: init.start, moves: init.moves, cursor: init.cursor };
    var state = init.state;
    var filter = "";
    var busy = false;
    var seed = init.seed || 0;
    var pageUrl = location.pathname + location.search;

    function controls() {
      $("#undo").disabled = busy || pos.cursor === 0;
      $("#redo").disabled = busy || pos.cursor >= pos.moves.length;
      $("#restart").disabled = busy || pos.cursor === 0;
      $("#random").disabled = busy;
      $("#to-end").disabled = busy;
    }

    function show(data) {
      pos = { start: data.start, moves: data.moves, cursor: data.cursor };
      state = data.state;
      ["status", "board", "legal", "refused", "history"].forEach(function (k) {
        $("#" + k).innerHTML = data.html[k];
      });
      var here = $(".history li.here");
      if (here && here.scrollIntoView) here.scrollIntoView({ block: "nearest" });
      var empty = pos.start === null && pos.moves.length === 0;
      window.history.replaceState(null, "", pageUrl + (empty ? "" : "#" +
        encodeURIComponent(JSON.stringify(pos))));
    }

    function post(path, extra) {
      if (busy) return Promise.resolve(null);
      busy = true;
      controls();
      document.body.classList.add("busy");
      var body = { game: init.options.game, variants: init.options.variants,
                   params: init.options.params, start: pos.start, moves: pos.moves,
                   cursor: pos.cursor, filter: filter };
      Object.keys(extra || {}).forEach(function (k) { body[k] = extra[k]; });
      return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                           body: JSON.stringify(body) })
        .then(function (r) {
          return r.json().catch(function () { return { error: "the server answered " + r.status }; })
            .then(function (data) {
              if (!r.ok) { message(data.error || ("the server answered " + r.status)); return null; }
              message("");
              return data;
            });
        })
        .catch(function (e) { message("no answer from the server: " + e); return null; })
        .then(function (data) {
          busy = false;
          document.body.classList.remove("busy");
          if (data && data.html) show(data);
          controls();
          return data;
        });
    }

    function goTo(cursor) { return post("/api/view", { cursor: cursor }); }
    function play(move) { return post("/api/apply", { move: move }); }

    function fromHash() {
      if (!location.hash || location.hash.length < 2) return false;
      var h;
      try { h = JSON.parse(decodeURIComponent(location.hash.slice(1))); }
      catch (e) { message("the page's fragment is not a position: " + e); return false; }
      pos = { start: h.start === undefined ? null : h.start, moves: h.moves || [],
              cursor: typeof h.cursor === "number" ? h.cursor : (h.moves || []).length };
      goTo(pos.cursor);
      return true;
    }

    $("#undo").addEventListener("click", function () { if (pos.cursor > 0) goTo(pos.cursor - 1); });
    $("#redo").addEventListener("click", function () {
      if (pos.cursor < pos.moves.length) goTo(pos.cursor + 1);
    });
    $("#restart").addEventListener("click", function () { goTo(0); });
    $("#random").addEventListener("click", function () { post("/api/random", { seed: seed, count: 1 }); });
    $("#to-end").addEventListener("click", function () {
      message("playing to the end…", "info");
      post("/api/random", { seed: seed, count: "end" });
    });
    document.addEventListener("click", function (ev) {
      var b = ev.target.closest && ev.target.closest("button");
      if (!b) return;
      if (b.classList.contains("move")) play(JSON.parse(b.getAttribute("data-move")));
      else if (b.classList.contains("jump")) goTo(parseInt(b.getAttribute("data-cursor"), 10));
    });
    $("#try-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var text = $("#try-move").value;
      if (text.trim()) post("/api/apply", { move_text: text });
    });
    var filterTimer = null;
    $("#filter").addEventListener("input", function () {
      clearTimeout(filterTimer);
      filterTimer = setTimeout(function () { filter = $("#filter").value; goTo(pos.cursor); }, 350);
    });
    function historyJson() {
      return JSON.stringify({ game: init.options.game, variants: init.options.variants,
                              params: init.options.params, start: pos.start,
                              moves: pos.moves.slice(0, pos.cursor) });
    }
    function copy() {
      var text = historyJson();
      var box = $("#paste");
      box.value = text;
      var done = function () { message("history copied (" + pos.cursor + " moves); paste it in Load to replay it", "info"); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () {
          box.select(); message("the history is in the Load box below: copy it from there", "info");
        });
      } else { box.select(); done(); }
    }
    $("#copy").addEventListener("click", copy);
    $("#load-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      post("/api/load", { text: $("#paste").value }).then(function (data) {
        if (!data || !data.url) return;
        var i = data.url.indexOf("#");
        var target = i < 0 ? data.url : data.url.slice(0, i);
        if (target === pageUrl) {
          location.hash = i < 0 ? "" : data.url.slice(i);
          fromHash();
          message("loaded the " + data.kind, "info");
        } else {
          location.href = data.url;
        }
      });
    });
    var cmp = $("#compare-form");
    if (cmp) cmp.addEventListener("submit", function () {
      var input = $("input[name=state]", cmp);
      if (!input) {
        input = document.createElement("input");
        input.type = "hidden";
        input.name = "state";
        cmp.appendChild(input);
      }
      input.value = JSON.stringify(state);
    });
    window.addEventListener("hashchange", function () { fromHash(); });
    document.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape" && typing(ev)) { ev.target.blur(); return; }
      if (typing(ev) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      var k = ev.key;
      var act = {
        "u": function () { $("#undo").click(); }, "ArrowLeft": function () { $("#undo").click(); },
        "r": function () { $("#redo").click(); }, "ArrowRight": function () { $("#redo").click(); },
        "n": function () { $("#random").click(); }, "e": function () { $("#to-end").click(); },
        "Home": function () { $("#restart").click(); }, "c": copy,
        "/": function () { $("#filter").focus(); }, "t": function () { $("#try-move").focus(); },
        "?": toggleKeys
      }[k];
      if (!act && /^[1-9]$/.test(k)) {
        var b = $$("#legal button.move")[parseInt(k, 10) - 1];
        if (b) act = function () { b.click(); };
      }
      if (act) { ev.preventDefault(); act(); }
    });
    if (!fromHash()) controls();
  }

  // ---- the puzzles page: step through an answer ---------------------------------------------
  $$(".answer").forEach(function (art) {
    var bar = $(".stepper", art);
    if (!bar) return;
    var n = parseInt(bar.getAttribute("data-steps"), 10);
    var at = 0;
    function step(k) {
      at = Math.max(0, Math.min(n, k));
      $$("figure.step", art).forEach(function (f) {
        f.hidden = parseInt(f.getAttribute("data-step"), 10) !== at;
      });
      $(".at", bar).textContent = at === 0 ? "start" : "step " + at;
      $$(".steps li", art).forEach(function (li, i) { li.classList.toggle("here", i + 1 === at); });
      $(".prev", bar).disabled = at === 0;
      $(".next", bar).disabled = at === n;
    }
    $(".prev", bar).addEventListener("click", function () { step(at - 1); });
    $(".next", bar).addEventListener("click", function () { step(at + 1); });
    $$(".goto", art).forEach(function (b) {
      b.addEventListener("click", function () { step(parseInt(b.getAttribute("data-step"), 10)); });
    });
    art.stepTo = step;
    step(0);
  });
  if (!initEl && $(".answer .stepper")) {
    document.addEventListener("keydown", function (ev) {
      if (typing(ev) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      var art = $(".answer");
      if (!art || !art.stepTo) return;
      var at = $(".at", art).textContent === "start" ? 0 :
        parseInt($(".at", art).textContent.replace("step ", ""), 10);
      if (ev.key === "ArrowRight" || ev.key === "n") { ev.preventDefault(); art.stepTo(at + 1); }
      else if (ev.key === "ArrowLeft" || ev.key === "p") { ev.preventDefault(); art.stepTo(at - 1); }
      else if (ev.key === "?") toggleKeys();
    });
  } else if (!initEl) {
    document.addEventListener("keydown", function (ev) {
      if (!typing(ev) && ev.key === "?") toggleKeys();
    });
  }
})();
