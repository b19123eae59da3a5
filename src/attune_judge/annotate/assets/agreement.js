// attune-judge annotate: the agreement page. Data is written with textContent only.
"use strict";
(function () {
  const token = new URLSearchParams(window.location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  $("back").href = "/?token=" + encodeURIComponent(token);
  function cell(row, text) { const td = document.createElement("td"); td.textContent = text; row.appendChild(td); }
  function num(x) { return x === null || x === undefined ? "—" : Number(x).toFixed(3); }
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
      $("judge").textContent = data.judge || "No judge run given (annotate --judge RUN).";
      $("status").textContent = (data.notes || []).join(" ");
    })
    .catch((e) => { $("status").textContent = e.message; $("status").className = "error"; });
})();
