// Search as you type: the objects the caller may load, from ./search; arrows pick, Enter opens.
"use strict";
(function () {
  const input = document.getElementById("search");
  const list = document.getElementById("results");
  if (!input || !list) return;
  let chosen = -1;
  let asked = 0;
  function items() { return Array.from(list.querySelectorAll("li")); }
  function mark() {
    items().forEach((li, i) => li.setAttribute("aria-selected", i === chosen ? "true" : "false"));
  }
  function open(name) { window.location.href = "./object?name=" + encodeURIComponent(name); }
  input.addEventListener("input", async () => {
    const q = input.value.trim();
    const mine = ++asked;
    if (!q) { list.replaceChildren(); return; }
    const answer = await fetch("./search?q=" + encodeURIComponent(q), { credentials: "same-origin" });
    if (!answer.ok || mine !== asked) return;
    const found = (await answer.json()).results;
    list.replaceChildren(...found.map((name) => {
      const li = document.createElement("li");
      li.textContent = name;
      li.setAttribute("role", "option");
      li.addEventListener("mousedown", (e) => { e.preventDefault(); open(name); });
      return li;
    }));
    chosen = found.length ? 0 : -1;
    mark();
  });
  input.addEventListener("keydown", (e) => {
    const all = items();
    if (e.key === "ArrowDown" && all.length) { chosen = (chosen + 1) % all.length; mark(); e.preventDefault(); }
    else if (e.key === "ArrowUp" && all.length) { chosen = (chosen - 1 + all.length) % all.length; mark(); e.preventDefault(); }
    else if (e.key === "Enter" && chosen >= 0 && all[chosen]) { e.preventDefault(); open(all[chosen].textContent); }
    else if (e.key === "Escape") { list.replaceChildren(); chosen = -1; }
  });
})();

// The object view's read back: fetched once the view is shown (a backend takes its time).
(function () {
  const box = document.getElementById("enforcement-box");
  if (!box) return;
  box.textContent = "reading each backend back…";
  fetch(box.dataset.src, { credentials: "same-origin" })
    .then((answer) => (answer.ok ? answer.text() : Promise.reject(new Error(String(answer.status)))))
    .then((html) => {
      const doc = new DOMParser().parseFromString(html, "text/html");
      const table = doc.getElementById("enforcement");
      box.replaceChildren(table ? document.importNode(table, true) : document.createTextNode("no answer"));
    })
    .catch(() => { box.textContent = "the backends could not be read back"; });
})();
