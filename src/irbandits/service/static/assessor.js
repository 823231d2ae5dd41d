// The assessor page: fetch the next task, show it, send the answer; keyboard first.
// The token is read from this page's URL (/a/TOKEN) and sent only to this origin's /api/.
// Texts are set with textContent or as text nodes, never parsed as HTML, without bidirectional control
// characters; the query's terms are marked in the passages with <mark> elements built node by node.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const token = decodeURIComponent(location.pathname.split("/")[2] || "");
  const kind = $("app").dataset.kind;
  const texts = Array.from(document.querySelectorAll(".item .text"));
  const cues = texts.map((t) => t.closest(".item").querySelector(".more"));  // "more below" on a long passage
  const buttons = Array.from(document.querySelectorAll("button.answer"));
  const skipButtons = ["cant-judge", "report-open", "report-send"].map($);
  let task = null;      // the task shown now
  let clientId = null;  // one per task: a repeated or retried answer is recorded once
  let skipId = null;    // one per task, for its skip or report (a retried one is recorded once)
  let busy = false;     // an answer or a fetch is on its way: keys and clicks wait
  let timer = null;
  let helpFrom = null;  // what had the focus when the help opened: it gets it back
  const idle = { title: $("idle-title").textContent, why: $("idle-why").textContent };  // nothing open for now

  function newClientId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function api(path, options = {}) {
    return fetch(path, {
      ...options, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer",
      headers: { Authorization: "Bearer " + token, ...(options.headers || {}) },
    });
  }

  // bidirectional overrides, embeddings and isolates are dropped: a text cannot show itself reversed
  const shown = (text) => text.replace(/[\u202A-\u202E\u2066-\u2069]/g, "");

  // the query's terms: its words of 3 letters or more, lower-cased, but for a few very common ones
  const WORD = /[\p{L}\p{M}\p{N}]+/gu;
  const STOP = new Set(("the and for are but not you all any can had her was one our out has his how its who "
    + "why what when where which with this that these those from into about does did than then there their "
    + "they them were been being have will would should could your also some such only other more most very "
    + "just over under between after before while").split(" "));

  function terms(query) {
    return new Set(Array.from(query.matchAll(WORD), (m) => m[0].toLowerCase())
      .filter((w) => [...w].length >= 3 && !STOP.has(w)));
  }

  // a text as nodes: text nodes, and <mark> elements around the whole words that are query terms
  function marked(text, wanted) {
    const nodes = [];
    let from = 0;
    for (const m of text.matchAll(WORD)) {
      if (!wanted.has(m[0].toLowerCase())) continue;
      if (m.index > from) nodes.push(document.createTextNode(text.slice(from, m.index)));
      const mark = document.createElement("mark");
      mark.textContent = m[0];
      nodes.push(mark);
      from = m.index + m[0].length;
    }
    if (from < text.length) nodes.push(document.createTextNode(text.slice(from)));
    return nodes;
  }

  // the "highlight query terms" choice, remembered in this browser where storage is allowed
  const HIGHLIGHT = "irbandits-highlight";
  function remembered() {
    try { return localStorage.getItem(HIGHLIGHT) !== "off"; } catch (e) { return true; }
  }
  function remember(on) {
    try { localStorage.setItem(HIGHLIGHT, on ? "on" : "off"); } catch (e) { /* kept for this page only */ }
  }

  // the passages of the task shown, their query terms marked or not
  function paint() {
    const wanted = $("highlight").checked ? terms(shown(task.query)) : new Set();
    task.items.forEach((item, i) => texts[i].replaceChildren(...marked(shown(item.text), wanted)));
    texts.forEach((_, i) => cue(i));
  }

  // the cue shows while a passage has more text below its box's bottom edge
  function cue(i) {
    const t = texts[i];
    cues[i].hidden = t.scrollHeight - t.scrollTop - t.clientHeight <= 1;
  }

  // a topic's description and narrative, shown when the task has them
  function about(id, value) {
    const has = typeof value === "string" && value.trim() !== "";
    $(id).textContent = has ? shown(value) : "";
    return has;
  }

  function say(text, bad = false) {
    $("status").textContent = text;
    $("status").classList.toggle("bad", bad);
  }

  function show(part) {
    $("loading").hidden = true;
    for (const id of ["task", "idle", "intro", "feedback"]) $(id).hidden = part !== id;
  }

  async function detail(response) {
    try { return (await response.json()).detail || response.statusText; } catch (e) { return response.statusText; }
  }

  // why nothing is shown: the campaign is paused or closed by its organiser, finished, or all its open
  // work is with others (GET /api/next answers 204 for each; /api/me's state and done tell them apart)
  function explain(me) {
    let title = idle.title, why = idle.why, again = true;
    if (me.state === "paused") {
      title = "Paused";
      why = "This campaign is paused by its organiser; come back later. This page checks again every 20 seconds.";
    } else if (me.state === "closed" || me.state === "archived") {
      [title, why, again] = ["Closed", "This campaign is closed by its organiser: it takes no more answers. Thank you!", false];
      clearTimeout(timer);  // a closed campaign never hands out work again
    } else if (me.stage === "finished") {
      [title, why, again] = ["All done", "You have finished your part of this campaign. Thank you!", false];
    } else if (me.stage === "excluded") {
      [title, why, again] = ["Thank you", "Too few of the known-answer checks were right: there is no more work for "
        + "you in this campaign.", false];
    } else if (me.stage === "screened-out") {
      [title, why, again] = ["Thank you", "The practice round did not go well enough to go on: there is no work for "
        + "you in this campaign.", false];
    } else if (me.done) {
      [title, why, again] = ["All done", "The campaign is finished. Thank you!", false];
    }
    if (!again) clearTimeout(timer);
    $("app").dataset.state = me.state;
    $("idle-title").textContent = title;
    $("idle-why").textContent = why;
    $("again").hidden = !again;
    const end = me.stage === "finished" && me.completion;
    $("completion").hidden = !end;
    if (end) {
      $("completion-code").value = me.completion.code;
      $("completion-link").hidden = !me.completion.url;
      if (me.completion.url) $("completion-link").href = me.completion.url;  // an https address the organiser set
    }
  }

  // the progress line: answers and topics, and in a crowd campaign the practice round or the bundle
  function progressLine(me) {
    const parts = [`${me.answered} answered`, `${me.topics_done} of ${me.topics} topics finished`];
    if (me.stage === "practice") parts.unshift(`practice ${me.practice.done + 1} of ${me.practice.total}`);
    if (me.bundles && me.stage === "work") {
      parts.unshift(`bundle ${me.bundles.done + 1}${me.bundles.quota ? " of " + me.bundles.quota : ""}: `
        + `${me.bundles.current} of ${me.bundles.size}`);
    }
    if (me.seconds_left !== undefined && me.stage === "work") parts.push(`${Math.ceil(me.seconds_left / 60)} min left`);
    return parts.join(" · ");
  }

  async function refreshProgress() {
    try {
      const r = await api("/api/me");
      if (!r.ok) return;
      const me = await r.json();
      $("progress").textContent = progressLine(me);
      explain(me);
    } catch (e) { /* progress is a nicety; the task flow reports connection problems */ }
  }

  function render(next) {
    task = next;
    clientId = newClientId();
    skipId = newClientId();
    closeReport();
    $("task").dataset.task = next.task;
    $("query").textContent = shown(next.query);
    $("description").hidden = !about("description", next.description);
    $("narrative").hidden = !about("narrative-text", next.narrative);
    buttons.forEach((b) => { b.classList.remove("pressed"); b.disabled = false; });
    skipButtons.forEach((b) => { b.disabled = false; });
    show("task");
    texts.forEach((t) => { t.scrollTop = 0; });
    paint();  // once shown: the cues need the boxes' sizes
    window.scrollTo(0, 0);
  }

  async function loadNext() {
    clearTimeout(timer);
    busy = true;
    try {
      const r = await api("/api/next");
      if (r.status === 204) {
        task = null;
        timer = setTimeout(loadNext, 20000);
        await refreshProgress();  // says why before the idle part shows
        show("idle");
        say("");
        return;
      } else if (r.ok) {
        render(await r.json());
      } else {
        const why = await detail(r);
        task = null;
        if (r.status === 409 && /consent/.test(why)) {
          show("intro");  // the consent comes first
          return;
        }
        show("idle");
        say(r.status === 401 ? "This link is not valid any more. Ask the organiser for a new one."
                             : `The server refused: ${why}`, true);
        return;
      }
      say("");
    } catch (e) {
      say("Cannot reach the server; trying again in a few seconds…", true);
      timer = setTimeout(loadNext, 5000);
    } finally {
      busy = false;
    }
    refreshProgress();
  }

  async function answer(value) {
    if (!task || busy) return;
    busy = true;
    const pressed = buttons.find((b) => b.dataset.answer === String(value));
    if (pressed) pressed.classList.add("pressed");
    buttons.forEach((b) => { b.disabled = true; });
    let notice = "", feedback = null;
    try {
      const r = await api(`/api/tasks/${task.task}/answer`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ answer: value, client_id: clientId }),
      });
      if (r.status === 409 && / is (closed|archived)$/.test(await detail(r))) {
        notice = "The campaign was closed by its organiser: that answer was not recorded.";
      } else if (r.status === 409 || r.status === 404) {
        notice = "That task had expired and may go to someone else; here is the next one.";
      } else if (!r.ok) {
        say(`Not recorded: ${await detail(r)}`, true);
        buttons.forEach((b) => { b.disabled = false; b.classList.remove("pressed"); });
        busy = false;
        return;
      } else {
        const body = await r.json();
        if ("correct" in body) feedback = body;  // a practice pair: right or wrong, and why
      }
    } catch (e) {
      say("Not sent: no connection. Press again to retry (it will be recorded once).", true);
      buttons.forEach((b) => { b.disabled = false; b.classList.remove("pressed"); });
      busy = false;
      return;
    }
    busy = false;
    if (feedback) {
      showFeedback(feedback);
      return;
    }
    $("undo").hidden = false;  // the answer just sent may be taken back (while its phase is open)
    await loadNext();
    if (notice) say(notice);
  }

  // after a practice pair: whether the answer was right, which passage was better, the organiser's note
  function showFeedback(f) {
    const better = task.items.findIndex((item) => item.docno === f.better) + 1;
    $("feedback").dataset.correct = f.correct ? "1" : "0";
    $("feedback-title").textContent = f.correct ? "Right" : "Not quite";
    $("feedback-why").textContent = `Passage ${better} was the better one.`;
    $("feedback-note").textContent = shown(f.note || "");
    task = null;
    $("undo").hidden = true;  // a practice answer is not taken back
    show("feedback");
    $("feedback-next").focus();
    refreshProgress();
  }

  // the guidelines and the consent before any task; Start records the consent, then the work begins
  async function start(e) {
    e.preventDefault();
    if ($("app").dataset.consent === "1") {
      try {
        const r = await api("/api/consent", {
          method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ agree: true }),
        });
        if (!r.ok) { say(`Not recorded: ${await detail(r)}`, true); return; }
      } catch (err) { say("Not sent: no connection. Try again.", true); return; }
    }
    if ($("guidelines-open")) $("guidelines-open").hidden = false;
    loadNext();
  }

  // the first view: the guidelines (and consent) for someone who has not begun, else the next task
  async function begin() {
    let me = null;
    try {
      const r = await api("/api/me");
      if (r.ok) me = await r.json();
    } catch (e) { /* loadNext reports connection problems */ }
    const fresh = me && me.answered === 0 && (!me.practice || me.practice.done === 0);
    if (me && (me.stage === "consent" || ($("app").dataset.guidelines === "1" && fresh && me.stage !== undefined))) {
      if (me.stage !== "consent") $("consent-form").querySelector("h2")?.remove();
      show("intro");
      return;
    }
    if ($("guidelines-open")) $("guidelines-open").hidden = false;
    loadNext();
  }

  function openReport() {
    $("report").hidden = false;
    $("report-open").setAttribute("aria-expanded", "true");
    $("report").scrollIntoView({ block: "nearest" });
  }

  function closeReport() {
    $("report").hidden = true;
    $("report").reset();
    $("report-open").setAttribute("aria-expanded", "false");
  }

  // skip the task shown: "can't judge", or a problem report (reason, optional comment); not an answer,
  // so the pair goes to someone else and this page asks for the next one
  async function skip(reason, comment) {
    if (!task || busy) return;
    busy = true;
    skipButtons.forEach((b) => { b.disabled = true; });
    let notice = reason === "cant-judge" ? "Skipped." : "Thank you: your report was sent.";
    try {
      const r = await api(`/api/tasks/${task.task}/skip`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ reason, comment: comment || null, client_id: skipId }),
      });
      if (r.status === 409 && / is (closed|archived)$/.test(await detail(r))) {
        notice = "The campaign was closed by its organiser.";
      } else if (r.status === 409 || r.status === 404) {
        notice = "That task had expired and may go to someone else.";
      } else if (!r.ok) {
        say(`Not sent: ${await detail(r)}`, true);
        skipButtons.forEach((b) => { b.disabled = false; });
        busy = false;
        return;
      }
    } catch (e) {
      say("Not sent: no connection. Press again to retry (it will be recorded once).", true);
      skipButtons.forEach((b) => { b.disabled = false; });
      busy = false;
      return;
    }
    busy = false;
    await loadNext();
    say(task ? `${notice} Here is the next one.` : notice);
  }

  async function undo() {
    if (busy || $("undo").hidden) return;
    busy = true;
    clearTimeout(timer);
    try {
      const r = await api("/api/undo", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ client_id: newClientId() }),
      });
      busy = false;
      $("undo").hidden = true;
      if (r.ok && r.status !== 204) {
        render(await r.json());
        say("Your last answer was taken back: here is that pair again.");
      } else {
        say(`Cannot undo: ${await detail(r)}`, true);
      }
    } catch (e) {
      busy = false;
      say("Not sent: no connection. Try again.", true);
    }
    refreshProgress();
  }

  function openHelp() {
    if ($("help").open) return;
    helpFrom = document.activeElement;
    $("help").showModal();
  }

  const keys = kind === "preference"
    ? { "1": "left", ArrowLeft: "left", "2": "right", ArrowRight: "right" }
    : Object.fromEntries(buttons.map((b) => [b.dataset.answer, Number(b.dataset.answer)]));

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    if ($("help").open) return;  // the help's own keys: Esc closes it
    if (!$("feedback").hidden) {   // after a practice pair: Enter goes on
      if (e.key === "Enter") { e.preventDefault(); loadNext(); }
      return;
    }
    if (!$("intro").hidden) return;
    if (!$("report").hidden || e.target.closest("input:not([type=checkbox]), textarea, select")) return;  // typing
    if (e.key === "?") { e.preventDefault(); openHelp(); return; }
    if (e.key === "u" || e.key === "U") { e.preventDefault(); undo(); return; }
    if (!(e.key in keys)) return;
    e.preventDefault();
    answer(keys[e.key]);
  });
  buttons.forEach((b) => b.addEventListener("click", () => answer(keys[b.dataset.answer] ?? b.dataset.answer)));
  $("again").addEventListener("click", loadNext);
  $("undo").addEventListener("click", undo);
  $("cant-judge").addEventListener("click", () => skip("cant-judge"));
  $("report-open").addEventListener("click", () => ($("report").hidden ? openReport() : closeReport()));
  $("report-cancel").addEventListener("click", closeReport);
  $("report").addEventListener("submit", (e) => {
    e.preventDefault();
    skip(new FormData($("report")).get("reason"), $("report-comment").value.trim());
  });
  $("highlight").checked = remembered();
  $("highlight").addEventListener("change", () => {
    remember($("highlight").checked);
    if (task) paint();
  });
  const resized = new ResizeObserver((entries) => entries.forEach((e) => cue(texts.indexOf(e.target))));
  texts.forEach((t, i) => {
    t.addEventListener("scroll", () => cue(i), { passive: true });
    resized.observe(t);
  });
  $("help-open").addEventListener("click", openHelp);
  $("consent-form").addEventListener("submit", start);
  $("feedback-next").addEventListener("click", loadNext);
  $("completion-copy").addEventListener("click", () => {
    $("completion-code").select();
    if (navigator.clipboard) navigator.clipboard.writeText($("completion-code").value).catch(() => {});
  });
  if ($("guidelines-dialog")) {
    $("guidelines-open").addEventListener("click", () => $("guidelines-dialog").showModal());
    $("guidelines-close").addEventListener("click", () => $("guidelines-dialog").close());
  }
  $("help-close").addEventListener("click", () => $("help").close());
  $("help").addEventListener("close", () => {
    if (helpFrom && helpFrom.isConnected) helpFrom.focus();
    helpFrom = null;
  });
  begin();
})();
