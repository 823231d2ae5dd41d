// An experiment's dashboard, refreshed every 5 seconds from /admin/experiments/EID/state.json: state, numbers
// and two plots; for rankers the leaderboard and matrix, for a learner (a state with weights) the ranker's
// weights. Texts are set with textContent.
"use strict";
(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const W = 460, H = 200, L = 60, R = 10, T = 10, B = 24;   // the viewBox of a half-width plot: text at its CSS size
  const root = document.getElementById("experiment");
  if (!root) return;

  function el(name, attrs, text) {
    const node = document.createElementNS(SVG, name);
    Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
    if (text !== undefined) node.textContent = String(text).replace(/[\u202A-\u202E\u2066-\u2069]/g, "");
    return node;
  }

  function axes(svg, yTop, yBottom, xLeft, xRight) {
    svg.append(el("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
    svg.append(el("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
    svg.append(el("text", { x: L - 6, y: T + 8, "text-anchor": "end" }, yTop));
    svg.append(el("text", { x: L - 6, y: H - B, "text-anchor": "end" }, yBottom));
    svg.append(el("text", { x: L, y: H - 6 }, xLeft));
    svg.append(el("text", { x: W - R, y: H - 6, "text-anchor": "end" }, xRight));
  }

  function clock(t) { return new Date(t * 1000).toISOString().slice(11, 19); }

  function plotOutcomes(history) {
    const svg = document.getElementById("outcomes-plot");
    svg.replaceChildren();
    if (!history.length) return;
    const t0 = history[0].time, t1 = Math.max(history[history.length - 1].time, t0 + 1);
    const n = history[history.length - 1].outcomes;
    const x = (t) => L + (W - L - R) * (t - t0) / (t1 - t0), y = (v) => H - B - (H - B - T) * v / n;
    let d = `M${x(t0)},${y(0)}`;
    history.forEach((h) => { d += ` L${x(h.time).toFixed(1)},${y(h.outcomes).toFixed(1)}`; });
    svg.append(el("path", { class: "line", d }));
    axes(svg, String(n), "0", clock(t0) + " UTC", clock(t1));
  }

  function plotRecommended(history, names) {
    const svg = document.getElementById("recommended-plot");
    svg.replaceChildren();
    if (!history.length) return;
    const n = history[history.length - 1].outcomes, k = names.length;
    const x = (v) => L + (W - L - R) * v / Math.max(n, 1), y = (i) => T + (H - B - T) * (i + 0.5) / k;
    let d = "";
    history.forEach((h, i) => {
      const yy = y(names.indexOf(h.recommended)).toFixed(1);
      d += i ? ` H${x(h.outcomes).toFixed(1)} V${yy}` : `M${x(h.outcomes).toFixed(1)},${yy}`;
    });
    svg.append(el("path", { class: "line", d }));
    names.forEach((name, i) => { if (k <= 12 || i % Math.ceil(k / 12) === 0) svg.append(el("text", { x: L - 6, y: y(i) + 4, "text-anchor": "end" }, name)); });
    svg.append(el("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
    svg.append(el("text", { x: L, y: H - 6 }, "outcome 1"));
    svg.append(el("text", { x: W - R, y: H - 6, "text-anchor": "end" }, String(n)));
  }

  function plotClicks(history) {
    const svg = document.getElementById("clicks-plot");
    svg.replaceChildren();
    if (!history.length) return;
    const n = history[history.length - 1].outcomes, top = Math.max(...history.map((h) => h.clicks)) || 1;
    const x = (v) => L + (W - L - R) * v / Math.max(n, 1), y = (c) => H - B - (H - B - T) * c / top;
    const d = history.map((h, i) => `${i ? "L" : "M"}${x(h.outcomes).toFixed(1)},${y(h.clicks).toFixed(1)}`).join(" ");
    svg.append(el("path", { class: "line", d }));
    axes(svg, top.toFixed(2), "0", "outcome 1", String(n));
  }

  function fill(tbody, rows) {
    tbody.replaceChildren(...rows.map((cells) => {
      const tr = document.createElement("tr");
      cells.forEach(([text, cls, tag]) => {
        const td = document.createElement(tag || "td");
        if (cls) td.className = cls;
        td.textContent = String(text).replace(/[\u202A-\u202E\u2066-\u2069]/g, "");   // no reversed names
        tr.append(td);
      });
      return tr;
    }));
  }

  function weightRows(weights) {   // admin_learner.html's table: feature, weight, a bar scaled to the largest |weight|
    const tbody = document.querySelector("#weights tbody"), top = Math.max(...weights.map(Math.abs)) || 1;
    fill(tbody, weights.map((w, i) => [[String(i), "num"], [w.toFixed(3), "num"]]));
    Array.from(tbody.rows).forEach((tr, i) => {
      const v = weights[i] / top, td = document.createElement("td"), svg = el("svg", {
        class: "weight-bar", viewBox: "-1 0 2 1", preserveAspectRatio: "none", "aria-hidden": "true" });
      svg.append(el("rect", { class: v < 0 ? "neg" : "pos", x: Math.min(v, 0), y: 0.15, width: Math.abs(v), height: 0.7 }),
                 el("line", { x1: 0, y1: 0, x2: 0, y2: 1 }));
      td.className = "bar-cell";
      td.append(svg);
      tr.append(td);
    });
  }

  function show(s) {
    const state = document.getElementById("state");
    state.textContent = s.state;
    state.className = "tag state-tag " + s.state;
    ["outcomes", "impressions", "expired", "open"].forEach((k) => { document.getElementById(k).textContent = s[k]; });
    plotOutcomes(s.history);
    if (s.weights) {
      const cpi = s.clicks_per_impression;
      document.getElementById("clicks-per-impression").textContent = cpi === null ? "–" : cpi.toFixed(2);
      ["clicks", "updates"].forEach((k) => { document.getElementById(k).textContent = s[k]; });
      plotClicks(s.history);
      weightRows(s.weights);
      return;
    }
    document.getElementById("recommended").textContent = s.recommended.replace(/[\u202A-\u202E\u2066-\u2069]/g, "");
    document.getElementById("arms-left").textContent = s.arms_left;
    const settled = document.getElementById("settled");
    settled.textContent = s.settled ? "settled" : "not settled";
    settled.classList.toggle("done", s.settled);
    fill(document.querySelector("#leaderboard tbody"), s.leaderboard.map((r, i) => [
      [String(i + 1), "num"], [r.name], [r.score.toFixed(2), "num"], [`${r.low.toFixed(2)} … ${r.high.toFixed(2)}`],
      [String(r.comparisons), "num"]]));
    const names = s.rankers.map((r) => r.name);
    fill(document.querySelector("#matrix tbody"), names.map((name, i) => [[name, "", "th"]].concat(names.map((_, j) =>
      [i === j ? "–" : `${s.matrix.wins[i][j]} / ${s.matrix.comparisons[i][j]}`, "num"]))));
    plotRecommended(s.history, names);
  }

  async function refresh() {
    try {
      const r = await fetch(root.dataset.state, { cache: "no-store", credentials: "same-origin" });
      if (r.ok) show(await r.json());
    } catch (e) { /* the next refresh tries again */ }
  }

  refresh();
  setInterval(refresh, 5000);
})();
