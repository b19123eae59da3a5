// attune-judge annotate: the agreement page. Data is written with textContent only.
"use strict";
(function () {
  const token = new URLSearchParams(window.location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  $("back").href = "/?token=" + encodeURIComponent(token);
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function cell(row, text) { row.appendChild(el("td", text)); }
  function num(x) { return x === null || x === undefined ? "—" : Number(x).toFixed(3); }
  function table(columns, rows, caption) {
    const t = el("table"), head = el("thead"), hr = el("tr"), body = el("tbody");
    columns.forEach((c) => hr.appendChild(el("th", c)));
    head.appendChild(hr); t.appendChild(head);
    rows.forEach((r) => { const tr = el("tr"); r.forEach((c) => cell(tr, c)); body.appendChild(tr); });
    t.appendChild(body);
    const wrap = el("div", null, "table");
    wrap.appendChild(t);
    if (caption) wrap.appendChild(el("p", caption, "caption"));
    return wrap;
  }
  // calibrate's report: sections of tables, facts and notes built from its typed result
  function section(parent, s, level) {
    parent.appendChild(el("h" + Math.min(level, 5), s.title));
    s.blocks.forEach((b) => {
      if (b.kind === "table") parent.appendChild(table(b.columns, b.rows, b.caption));
      else if (b.kind === "facts") parent.appendChild(table(["", ""], b.items));
      else if (b.kind === "note") parent.appendChild(el("p", b.text, b.level === "warning" ? "note warning" : "note"));
      else parent.appendChild(el("p", b.text));
    });
    s.sections.forEach((sub) => section(parent, sub, level + 1));
  }
  fetch("/api/agreement", { headers: { "X-Annotate-Token": token } })
    .then((r) => r.json().then((d) => { if (!r.ok) throw new Error(d.error); return d; }))
    .then((data) => {
      const body = document.querySelector("#humans tbody");
      data.dimensions.forEach((d) => {
        const row = document.createElement("tr");
        cell(row, d.dimension); cell(row, d.items); cell(row, d.annotators);
        cell(row, num(d.alpha));
        cell(row, d.low === null ? "—" : "[" + num(d.low) + ", " + num(d.high) + "]");
        body.appendChild(row);
      });
      const judge = $("judge");
      if (data.judge) data.judge.forEach((s) => section(judge, s, 3));
      else if (data.judge_text) judge.appendChild(el("pre", data.judge_text));
      else judge.appendChild(el("p", data.judge_error || "No judge run given (annotate --judge RUN)."));
      const notes = $("notes");
      (data.notes || []).forEach((n) => notes.appendChild(el("p", n, "note warning")));
      $("status").textContent = "";
    })
    .catch((e) => { $("status").textContent = e.message; $("status").className = "error"; });
})();
