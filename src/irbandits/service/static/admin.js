// Organiser pages: the creation form's kind switch, copy buttons, confirmations, and the dashboard's live numbers and plot
// (refreshed every 5 seconds from /admin/campaigns/CID/stats.json). Texts are set with textContent.
"use strict";
(() => {
  const SVG = "http://www.w3.org/2000/svg";

  // ----- creation form: show the options of the chosen kind -----
  const form = document.getElementById("new-campaign");
  if (form) {
    const sync = () => {
      const kind = form.querySelector("input[name=kind]:checked").value;
      form.querySelectorAll(".kind-options").forEach((f) => { f.hidden = f.dataset.kind !== kind; });
    };
    form.querySelectorAll("input[name=kind]").forEach((r) => r.addEventListener("change", sync));
    sync();
  }

  // ----- copy buttons -----
  document.querySelectorAll("button.copy").forEach((button) => button.addEventListener("click", async () => {
    const input = document.getElementById(button.dataset.copy);
    input.select();
    try { await navigator.clipboard.writeText(input.value); } catch (e) { document.execCommand("copy"); }
    button.textContent = "Copied";
  }));

  // ----- forms that revoke or replace a link ask first -----
  document.querySelectorAll("form[data-confirm]").forEach((f) => f.addEventListener("submit", (e) => {
    if (!window.confirm(f.dataset.confirm)) e.preventDefault();
  }));

  // after a POST that shows a new link or token once, make a reload a plain GET of the page
  const page = document.querySelector("[data-page]");
  if (page) history.replaceState(null, "", page.dataset.page);

  // ----- dashboard -----
  const dashboard = document.getElementById("dashboard");
  if (!dashboard) return;

  function el(name, attrs, text) {
    const node = document.createElementNS(SVG, name);
    Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function clock(t) {
    return new Date(t * 1000).toISOString().slice(11, 16);
  }

  function plot(series, now) {
    const svg = document.getElementById("plot");
    svg.replaceChildren();
    const W = svg.clientWidth || 900, H = 200, L = 44, R = 10, T = 10, B = 24;  // drawn in CSS pixels
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    if (!series.length) return;
    const t0 = series[0][0], t1 = Math.max(now, series[series.length - 1][0], t0 + 60);
    const n = series[series.length - 1][1];
    const x = (t) => L + (W - L - R) * (t - t0) / (t1 - t0);
    const y = (v) => H - B - (H - B - T) * v / n;
    let d = `M${x(t0)},${y(0)}`;  // a step line: the count rises at each judgment's time
    series.forEach(([t, v]) => { d += ` H${x(t).toFixed(1)} V${y(v).toFixed(1)}`; });
    d += ` L${x(t1).toFixed(1)},${y(n).toFixed(1)}`;
    svg.append(el("path", { class: "area", d: `${d} L${x(t1)},${y(0)} Z` }));
    svg.append(el("path", { class: "line", d }));
    svg.append(el("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
    svg.append(el("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
    svg.append(el("text", { x: L - 6, y: y(n) + 4, "text-anchor": "end" }, String(n)));
    svg.append(el("text", { x: L - 6, y: H - B + 4, "text-anchor": "end" }, "0"));
    svg.append(el("text", { x: L, y: H - 6 }, clock(t0) + " UTC"));
    svg.append(el("text", { x: W - R, y: H - 6, "text-anchor": "end" }, clock(t1)));
  }

  function rows(tbody, items, key, cells) {
    const byKey = new Map(Array.from(tbody.rows).map((r) => [r.dataset[key], r]));
    items.forEach((item) => {
      const row = byKey.get(String(item[key === "assessor" ? "id" : "topic"]));
      if (row) cells(row, item);
    });
  }

  async function refresh() {
    try {
      const r = await fetch(dashboard.dataset.stats, { cache: "no-store", credentials: "same-origin" });
      if (!r.ok) return;
      const s = await r.json();
      document.getElementById("judgments").textContent = s.judgments;
      document.getElementById("last-hour").textContent = s.last_hour;
      document.getElementById("topics-done").textContent = s.topics.filter((t) => t.done).length;
      const state = s.state === "running" && s.done ? "done" : s.state;  // as the page's state_tag shows it
      document.getElementById("state").textContent = state;
      document.getElementById("state").className = "tag state-tag " + state;
      document.getElementById("plot-note").textContent = s.series.length ? "" : "No judgment yet.";
      rows(document.querySelector("#topics tbody"), s.topics, "topic", (row, t) => {
        row.cells[1].textContent = t.judgments;
        row.cells[2].textContent = t.open;
        row.cells[3].textContent = t.saved || "";
        const state = row.cells[4].firstElementChild || row.cells[4];
        state.textContent = t.done ? "done" : t.settled ? "settled" : "open";
        state.className = "state " + state.textContent;
      });
      [["topics-settled", s.settled], ["saved", s.saved], ["flagged", s.flagged],
       ["report-count", s.reports.length], ["for-people", s.for_people]].forEach(([id, v]) => {
        const node = document.getElementById(id);
        if (node) node.textContent = v;
      });
      rows(document.querySelector("#assessors tbody"), s.assessors, "assessor", (row, a) => {
        row.cells[1].textContent = a.judgments;
      });
      const hours = document.querySelector("#per-hour tbody");
      hours.replaceChildren(...s.per_hour.map((h) => {
        const tr = document.createElement("tr");
        [h.hour, h.judgments].forEach((v, i) => {
          const td = document.createElement("td");
          td.textContent = v;
          if (i) td.className = "num";
          tr.append(td);
        });
        return tr;
      }));
      const reports = document.querySelector("#reports tbody");
      if (s.reports.length && reports.rows.length !== s.reports.length) {  // new reports: the table anew
        const reasons = { "cant-judge": "can't judge", broken: "broken passage", language: "wrong language", other: "other" };
        reports.replaceChildren(...s.reports.map((x) => {
          const tr = document.createElement("tr");
          tr.dataset.report = x.id;
          [x.topic, x.docnos.join(", "), reasons[x.reason], x.comment || "", x.name, x.when].forEach((v, i) => {
            const td = document.createElement("td");
            td.textContent = v;
            td.className = ["", "", "reason", "comment", "", "small"][i];
            tr.append(td);
          });
          return tr;
        }));
      }
      plot(s.series, s.now);
    } catch (e) { /* the next refresh tries again */ }
  }

  refresh();
  setInterval(refresh, 5000);
})();
