// attune-judge annotate: the labelling page. Data is written with textContent only.
"use strict";
(function () {
  const token = new URLSearchParams(window.location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  let current = null;      // the item on screen
  let focusIndex = 0;      // the criterion keyboard input goes to
  let busy = false;

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  async function api(method, path, body) {
    const opts = { method: method, headers: { "X-Annotate-Token": token } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const res = await fetch(path, opts);
    const data = await res.json().catch(() => ({ error: "unreadable answer" }));
    if (!res.ok) throw new Error(data.error || ("HTTP " + res.status));
    return data;
  }

  function failure(e) {
    return e instanceof TypeError
      ? "Could not reach the server (" + e.message + "): nothing was saved. Press Enter to try again."
      : e.message;
  }

  function status(text, isError) {
    $("status").textContent = text || "";
    $("status").className = isError ? "error" : "";
  }

  function showProgress(p) {
    $("progress").textContent = p.annotator + ": " + p.labelled + " labelled, " +
      p.skipped + " skipped, " + p.flagged + " flagged · items complete " +
      p.complete_items + " / " + p.items + " (k = " + p.k + ")";
  }

  function fieldsets() { return Array.from(document.querySelectorAll("#answers fieldset")); }

  function setFocus(i) {
    const sets = fieldsets();
    if (!sets.length) return;
    focusIndex = Math.max(0, Math.min(i, sets.length - 1));
    sets.forEach((f, n) => f.classList.toggle("current", n === focusIndex));
    sets[focusIndex].scrollIntoView({ block: "nearest" });
  }

  function choiceSet(name, legend, options, help) {
    const fs = el("fieldset");
    fs.dataset.name = name;
    fs.appendChild(el("legend", legend));
    if (help) fs.appendChild(help);
    const box = el("div", null, "choices");
    options.forEach(([value, label]) => {
      const lab = el("label");
      const input = document.createElement("input");
      input.type = "radio"; input.name = name; input.value = String(value);
      input.tabIndex = -1;
      lab.appendChild(input);
      lab.appendChild(document.createTextNode(" " + label));
      box.appendChild(lab);
    });
    fs.appendChild(box);
    return fs;
  }

  function render(view) {
    current = view;
    $("flagbox").hidden = true;
    if (!view) {
      $("task").hidden = true;
      status("Nothing left to label: thank you. You can still undo your last answer.");
      return;
    }
    $("task").hidden = false;
    $("instructions").textContent = view.instructions || "";
    const ctx = $("context"); ctx.replaceChildren();
    view.context.forEach((m) => {
      const li = el("li", null, m.role);
      li.appendChild(el("span", m.role === "user" ? "Person" : m.role === "assistant" ? "Reply" : "System", "role"));
      li.appendChild(document.createTextNode(m.content));
      ctx.appendChild(li);
    });
    const replies = $("replies"); replies.replaceChildren();
    const form = $("answers"); form.replaceChildren();
    if (view.task === "pairwise") {
      replies.appendChild(el("h2", "Which reply is better?"));
      replies.appendChild(el("p", view.question, "question"));
      const grid = el("div", null, "replies");
      view.replies.forEach((text, n) => {
        const box = el("div", null, "reply");
        box.appendChild(el("span", n === 0 ? "First reply (1)" : "Second reply (2)", "role"));
        box.appendChild(document.createTextNode(text));
        grid.appendChild(box);
      });
      replies.appendChild(grid);
      form.appendChild(choiceSet("choice", "Your choice",
        [["first", "First (1)"], ["second", "Second (2)"], ["tie", "Tie (T)"]]));
      $("keys").textContent = "Keys: 1 first, 2 second, T tie, Enter submit, S skip, F flag, U undo.";
    } else {
      if (view.reference !== undefined) {
        replies.appendChild(el("h2", "Reference reply (rate the reply below against it)"));
        replies.appendChild(el("div", view.reference, "reference"));
      }
      replies.appendChild(el("h2", "The reply to label"));
      replies.appendChild(el("div", view.reply, "reply"));
      view.criteria.forEach((c) => {
        const help = el("div");
        help.appendChild(el("p", c.description));
        if (view.task === "ratings" && c.anchors.length) {
          const ul = el("ul", null, "anchors");
          c.anchors.forEach(([level, text]) => ul.appendChild(el("li", level + ": " + text)));
          help.appendChild(ul);
        }
        const options = view.task === "behaviours"
          ? [["yes", "yes (Y)"], ["no", "no (N)"]]
          : Array.from({ length: c.scale[1] - c.scale[0] + 1 }, (_, i) => [c.scale[0] + i, String(c.scale[0] + i)]);
        form.appendChild(choiceSet(c.id, c.name, options, help));
      });
      $("keys").textContent = view.task === "behaviours"
        ? "Keys: Y yes, N no (then the next item), ↑/↓ move, Enter submit, S skip, F flag, U undo."
        : "Keys: a number rates the highlighted criterion (then the next), ↑/↓ move, Enter submit, S skip, F flag, U undo.";
    }
    setFocus(0);
  }

  function answers() {
    const out = {};
    for (const fs of fieldsets()) {
      const picked = fs.querySelector("input:checked");
      if (!picked) return { missing: fs.dataset.name };
      out[fs.dataset.name] = current.task === "ratings" ? Number(picked.value) : picked.value;
    }
    return { answers: out };
  }

  function pick(value) {
    const fs = fieldsets()[focusIndex];
    if (!fs) return;
    const input = Array.from(fs.querySelectorAll("input")).find((i) => i.value === value);
    if (!input) return;
    input.checked = true;
    if (current.task !== "pairwise") setFocus(focusIndex + 1);
  }

  async function send(body, what) {
    if (busy || !current) return;
    busy = true;
    try {
      const data = await api("POST", "/api/label", Object.assign({ key: current.key }, body));
      status(what);
      render(data.item); showProgress(data.progress);
    } catch (e) { status(failure(e), true); }
    finally { busy = false; }
  }

  function submit() {
    const a = answers();
    if (a.missing) { status("Answer every question first (" + a.missing + " is missing).", true); return; }
    send({ answers: a.answers }, "Saved.");
  }

  async function undo() {
    if (busy) return;
    busy = true;
    try {
      const data = await api("POST", "/api/undo", {});
      status("Your last answer was removed; label this item again.");
      render(data.item); showProgress(data.progress);
    } catch (e) { status(e.message, true); }
    finally { busy = false; }
  }

  function openFlag() { $("flagbox").hidden = false; $("flagtext").value = ""; $("flagtext").focus(); }
  function closeFlag() { $("flagbox").hidden = true; $("flagtext").blur(); }
  function sendFlag() {
    const text = $("flagtext").value.trim();
    if (!text) { status("Write why you flag this item.", true); return; }
    send({ flag: text }, "Flagged.");
  }

  document.addEventListener("keydown", (ev) => {
    if (ev.target && ev.target.id === "flagtext") {
      if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); sendFlag(); }
      else if (ev.key === "Escape") { ev.preventDefault(); closeFlag(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const key = ev.key.toLowerCase();
    if (key === "u") { ev.preventDefault(); undo(); return; }
    if (!current) return;
    if (key === "enter") { ev.preventDefault(); submit(); }
    else if (key === "s") { ev.preventDefault(); send({ skip: true }, "Skipped."); }
    else if (key === "f") { ev.preventDefault(); openFlag(); }
    else if (key === "arrowdown") { ev.preventDefault(); setFocus(focusIndex + 1); }
    else if (key === "arrowup") { ev.preventDefault(); setFocus(focusIndex - 1); }
    else if (current.task === "pairwise") {
      const map = { "1": "first", "2": "second", "t": "tie" };
      if (map[key]) { ev.preventDefault(); pick(map[key]); }
    } else if (current.task === "behaviours") {
      if (key === "y") pick("yes"); else if (key === "n") pick("no");
    } else if (/^[0-9]$/.test(key)) { pick(key); }
  });

  $("submit").addEventListener("click", submit);
  $("skip").addEventListener("click", () => send({ skip: true }, "Skipped."));
  $("flag").addEventListener("click", openFlag);
  $("flagsend").addEventListener("click", sendFlag);
  $("flagcancel").addEventListener("click", closeFlag);
  $("undo").addEventListener("click", undo);
  $("agreementlink").href = "/agreement?token=" + encodeURIComponent(token);
  document.addEventListener("click", (ev) => {
    const fs = ev.target.closest && ev.target.closest("#answers fieldset");
    if (fs) setFocus(fieldsets().indexOf(fs));
  });

  api("GET", "/api/next")
    .then((data) => { render(data.item); showProgress(data.progress); })
    .catch((e) => status(e.message, true));
})();
