// memstack inspector: plain DOM, no build step, no network beyond this server's /v1 API.
// Every value from the server is set with textContent (never innerHTML).
"use strict";

const $ = (id) => document.getElementById(id);
const auth = { key: sessionStorage.getItem("memstack.key") || "", tenant: sessionStorage.getItem("memstack.tenant") || "" };
let boardStream = null;
let ttlTimer = null;
let searchTurn = 0;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = value;
    else if (name === "text") el.textContent = value;
    else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function headers(extra) {
  const out = Object.assign({ Accept: "application/json" }, extra || {});
  if (auth.key) out.Authorization = "Bearer " + auth.key;
  if (auth.tenant) out["X-Memstack-Tenant"] = auth.tenant;
  return out;
}

class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || "HTTP " + status);
    this.status = status;
  }
}

async function api(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  const data = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

function say(text, bad) {
  const el = $("status");
  el.textContent = text;
  el.classList.toggle("bad", Boolean(bad));
}

function fail(error) {
  if (error instanceof ApiError && error.status === 401) { signOut("The key was refused: sign in again."); return; }
  say(error.message || String(error), true);
}

// ISO-8601 UTC with a Z, from epoch seconds or any date string.
function iso(value) {
  if (value === null || value === undefined || value === "") return "";
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  return isNaN(date) ? String(value) : date.toISOString().replace(".000Z", "Z");
}
const json = (value) => JSON.stringify(value, null, 2);
const num = (value) => (value === null || value === undefined ? "–" : Number(value).toFixed(3));
const q = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined)).toString();
const enc = encodeURIComponent;
const count = (n, one, many) => n + " " + (n === 1 ? one : many || one + "s");

// -- sign in --------------------------------------------------------------------------------
// The server says who this tab is: {auth: "none" | "keys", tenant}. A keyless server needs no
// sign-in; in keys mode the tenant is known once a key is accepted (null before).
const whoami = () => api("GET", "/ui/api/whoami");

async function signIn(event) {
  event.preventDefault();
  auth.key = $("key").value.trim();
  auth.tenant = $("tenant").value.trim();
  let who;
  try {
    who = await whoami();
    if (!who.tenant) throw new ApiError(401, null);
  } catch (error) {
    $("signin-error").textContent = error.status === 401 ? "This key is not valid here."
      : error.status === 429 ? "Too many refused keys from this address: wait a moment and try again." : error.message;
    return;
  }
  sessionStorage.setItem("memstack.key", auth.key);
  sessionStorage.setItem("memstack.tenant", auth.tenant);
  $("key").value = "";
  enter(who);
}

function signOut(message) {
  sessionStorage.removeItem("memstack.key");
  sessionStorage.removeItem("memstack.tenant");
  auth.key = ""; auth.tenant = "";
  showSignIn(message);
}

function showSignIn(message) {
  stopBoard();
  $("tabs").hidden = true; $("signout").hidden = true; $("who").textContent = "";
  document.querySelectorAll(".view").forEach((v) => { v.hidden = true; });
  $("signin").hidden = false;
  $("signin-error").textContent = message || "";
  $("key").focus();
}

function enter(who) {
  const keyless = who.auth === "none";
  $("signin").hidden = true; $("tabs").hidden = false; $("signout").hidden = keyless;
  $("who").textContent = "Tenant: " + who.tenant + (keyless ? " (this server needs no key)" : "");
  show(location.hash.slice(1) || "sessions");
}

async function start() {
  let who;
  try {
    who = await whoami();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) { signOut("The key was refused: sign in again."); return; }
    showSignIn(error.message || String(error));
    return;
  }
  if (who.tenant) enter(who); else showSignIn("");
}

// -- views ----------------------------------------------------------------------------------
// A Map, not an object: a hash such as #constructor or #__proto__ names no view.
const loaders = new Map(Object.entries({ sessions: loadSessions, conversations: loadConversations, memories: searchMemories, working: loadWorking, shared: null, dream: loadDream, forget: null }));

function show(name) {
  if (!loaders.has(name)) name = "sessions";
  document.querySelectorAll(".view").forEach((v) => { v.hidden = v.id !== "view-" + name; });
  document.querySelectorAll("#tabs button").forEach((b) => {
    if (b.dataset.view === name) b.setAttribute("aria-current", "page"); else b.removeAttribute("aria-current");
  });
  if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
  if (name !== "shared") stopBoard();
  if (name !== "working" && ttlTimer) { clearInterval(ttlTimer); ttlTimer = null; }
  const load = loaders.get(name);
  if (load) load().catch(fail);
}

function pickable(list, id, label, onPick) {
  const button = h("button", { type: "button", "data-id": id, text: label, onclick: () => {
    list.querySelectorAll("button").forEach((b) => b.removeAttribute("aria-current"));
    button.setAttribute("aria-current", "true");
    onPick(id).catch(fail);
  } });
  return h("li", {}, button);
}

// Keyboard: arrow keys move between the items of a list.
function arrowKeys(list) {
  list.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const buttons = [...list.querySelectorAll("button")];
    const at = buttons.indexOf(document.activeElement);
    const next = buttons[at + (event.key === "ArrowDown" ? 1 : -1)];
    if (next) { next.focus(); event.preventDefault(); }
  });
}

async function pagedList(path, listId, moreId, label, onPick, cursor) {
  const list = $(listId);
  if (!cursor) list.replaceChildren();
  const page = await api("GET", path + "?" + q({ limit: 200, cursor }));
  for (const id of page.items) list.append(pickable(list, id, id, onPick));
  const more = $(moreId);
  more.hidden = !page.next_cursor;
  more.onclick = () => pagedList(path, listId, moreId, label, onPick, page.next_cursor).catch(fail);
  if (!cursor) say(page.items.length ? "" : "No " + label + " yet.");
}

// -- sessions -------------------------------------------------------------------------------
function loadSessions() { return pagedList("/v1/sessions", "session-list", "session-more", "sessions", openSession); }

async function openSession(id) {
  const [view, hist] = await Promise.all([
    api("GET", "/v1/sessions/" + enc(id)),
    api("GET", "/v1/sessions/" + enc(id) + "/history?limit=200"),
  ]);
  const values = h("tbody", {}, Object.entries(view.values).map(([key, value]) =>
    h("tr", {}, h("th", { scope: "row", text: key }), h("td", {}, h("pre", { text: json(value) })))));
  const entries = h("tbody", {}, hist.entries.map((entry) => {
    const { op, key, timestamp, ...rest } = entry;
    return h("tr", {}, h("td", { class: "num", text: iso(timestamp) }), h("td", {}, h("span", { class: "badge", text: op || "" })),
      h("td", { text: key || "" }), h("td", {}, h("pre", { text: Object.keys(rest).length ? json(rest) : "" })));
  }));
  $("session-detail").replaceChildren(
    h("h3", { text: "Session " + id + " · " + view.key_count + " keys" }),
    h("div", { class: "table-wrap" }, h("table", { "aria-label": "Values of session " + id },
      h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Key" }), h("th", { scope: "col", text: "Value" }))), values)),
    h("h3", { text: "History (" + hist.entries.length + ", oldest first; summaries included)" }),
    h("div", { class: "table-wrap" }, h("table", { "aria-label": "History of session " + id },
      h("thead", {}, h("tr", {}, ["Time (UTC)", "Operation", "Key", "Details"].map((t) => h("th", { scope: "col", text: t })))), entries)),
  );
}

// -- conversations --------------------------------------------------------------------------
function loadConversations() {
  return pagedList("/v1/conversations", "conversation-list", "conversation-more", "conversations", openConversation);
}

async function openConversation(id) {
  const started = performance.now();
  const messages = [];
  for (let start = 0; ; start += 1000) {
    const page = await api("GET", "/v1/conversations/" + enc(id) + "/messages?" + q({ start, limit: 1000 }));
    messages.push(...page.items);
    if (page.items.length < 1000) break;
  }
  const thread = await api("GET", "/v1/conversations/" + enc(id) + "/thread");
  const active = new Set(thread.items.map((m) => m.message_id));
  const children = new Map();
  const known = new Set(messages.map((m) => m.message_id));
  for (const m of messages) {
    const parent = m.parent_message_id && known.has(m.parent_message_id) ? m.parent_message_id : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(m);
  }
  let branchPoints = 0;
  const card = (m) => h("article", { class: "msg" + (active.has(m.message_id) ? " active" : ""), "data-message-id": m.message_id,
    "aria-label": m.role + " message" + (active.has(m.message_id) ? ", on the active thread" : "") },
    h("header", {}, h("span", { class: "role", text: m.role }), h("span", { text: m.token_count + " tokens" }),
      h("span", { text: iso(m.created_at) }), h("span", { text: "id " + m.message_id }),
      active.has(m.message_id) ? h("span", { class: "badge", text: "active thread" }) : null),
    h("p", { text: m.content }));
  // A chain of single replies stays flat; a message with several replies opens one nested list per branch.
  const chain = (first) => {
    const items = [];
    let m = first;
    while (m) {
      items.push(h("li", {}, card(m)));
      const kids = children.get(m.message_id) || [];
      if (kids.length === 1) { m = kids[0]; continue; }
      if (kids.length > 1) {
        branchPoints += 1;
        items.push(h("li", {}, h("ul", { class: "branches", "aria-label": kids.length + " branches" },
          kids.map((kid, i) => h("li", {}, h("p", { class: "branch-label", text: "Branch " + (i + 1) + " of " + kids.length + (active.has(kid.message_id) ? " (active)" : "") }),
            h("ul", {}, chain(kid)))))));
      }
      m = null;
    }
    return items;
  };
  const roots = children.get(null) || [];
  const tree = h("ul", { class: "tree", "aria-label": "Message tree of " + id }, roots.map((r) => chain(r)));
  const tokens = thread.items.reduce((sum, m) => sum + (m.token_count || 0), 0);
  $("conversation-detail").replaceChildren(
    h("h3", { text: "Conversation " + id }),
    h("p", { class: "summary", id: "conversation-summary",
      text: count(messages.length, "message") + " · " + count(branchPoints, "branch point") + " · active thread " +
        count(thread.items.length, "message") + ", " + count(tokens, "token") }),
    tree);
  document.body.dataset.treeMs = String(Math.round(performance.now() - started));
}

// -- long-term memories ---------------------------------------------------------------------
function scope() { return $("memory-scope").value.trim() || "default"; }

async function searchMemories(event) {
  if (event) event.preventDefault();
  const started = performance.now();
  const turn = ++searchTurn;
  const params = { scope: scope(), query: $("memory-query").value.trim(), category: $("memory-category").value.trim(), limit: 50 };
  const [page, cats, tags] = await Promise.all([
    api("GET", "/v1/memories?" + q(params)),
    api("GET", "/v1/memory-categories?" + q({ scope: scope() })),
    api("GET", "/v1/memory-tags?" + q({ scope: scope() })),
  ]);
  if (turn !== searchTurn) return;  // a newer search was started meanwhile: its answer wins
  const mode = page.items.length ? [...new Set(page.items.flatMap((hit) => hit.sources))].sort().join(" + ") : "";
  $("memory-summary").textContent = params.query
    ? count(page.items.length, "result") + " for “" + params.query + "”" + (mode ? " · mode: " + mode : "")
    : count(page.items.length, "newest memory", "newest memories");
  $("memory-results").tBodies[0].replaceChildren(...page.items.map(memoryRow));
  $("memory-categories").replaceChildren(...cats.items.map((c) => h("li", {}, h("button", { type: "button", class: "chip", text: c,
    onclick: () => { $("memory-category").value = c; searchMemories().catch(fail); } }))));
  $("category-options").replaceChildren(...cats.items.map((c) => h("option", { value: c })));
  $("memory-tags").replaceChildren(...tags.items.map((t) => h("li", { class: "chip", text: t })));
  document.body.dataset.searchMs = String(Math.round(performance.now() - started));
}

function memoryRow(hit) {
  const e = hit.entry;
  const row = h("tr", { "data-memory-id": e.id },
    h("td", {}, h("div", { text: e.content }), h("div", { class: "hint", text: e.id })),
    h("td", {}, e.category ? h("span", { class: "badge", text: e.category }) : null, " ", e.tags.map((t) => h("span", { class: "chip", text: t }))),
    h("td", { class: "num", text: num(hit.score) }), h("td", { class: "num", text: num(hit.bm25) }),
    h("td", { class: "num", text: num(hit.vector) }), h("td", { class: "num", text: iso(e.created_at) }),
    h("td", { class: "actions" }, h("button", { type: "button", "aria-label": "Edit memory " + e.id, text: "Edit", onclick: () => editMemory(row, e) }), " ",
      h("button", { type: "button", class: "danger", "aria-label": "Delete memory " + e.id, text: "Delete", onclick: () => deleteMemory(e).catch(fail) })));
  return row;
}

function editMemory(row, e) {
  if (row.nextElementSibling?.classList.contains("edit-row")) { row.nextElementSibling.remove(); return; }
  const content = h("textarea", { id: "edit-content-" + e.id, rows: 3 }); content.value = e.content;
  const category = h("input", { id: "edit-category-" + e.id, type: "text", value: e.category || "" });
  const tags = h("input", { id: "edit-tags-" + e.id, type: "text", value: e.tags.join(", ") });
  const form = h("form", { "aria-label": "Edit memory " + e.id },
    h("label", { for: content.id, text: "Content" }), content,
    h("label", { for: category.id, text: "Category" }), category,
    h("label", { for: tags.id, text: "Tags (comma-separated)" }), tags,
    h("span"), h("span", {}, h("button", { type: "submit", text: "Save" }), " ",
      h("button", { type: "button", text: "Cancel", onclick: () => editRow.remove() })));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("PUT", "/v1/memories/" + enc(e.id) + "?" + q({ scope: scope() }), {
        content: content.value, category: category.value.trim() || null,
        tags: tags.value.split(",").map((t) => t.trim()).filter(Boolean), metadata: e.metadata,
      });
      say("Saved " + e.id + ".");
      await searchMemories();
    } catch (error) { fail(error); }
  });
  const editRow = h("tr", { class: "edit-row" }, h("td", { colspan: 7 }, form));
  row.after(editRow);
  content.focus();
}

async function deleteMemory(e) {
  if (!confirm("Delete memory " + e.id + "?\n\n" + e.content)) return;
  await api("DELETE", "/v1/memories/" + enc(e.id) + "?" + q({ scope: scope() }));
  say("Deleted " + e.id + ".");
  await searchMemories();
}

// -- working memory -------------------------------------------------------------------------
async function loadWorking(event) {
  if (event) event.preventDefault();
  const namespace = $("working-namespace").value.trim();
  if (!namespace) { say("Name a namespace of two segments, e.g. session/abc."); return; }
  const params = { namespace, prefix: $("working-prefix").value.trim(), limit: 500 };
  const page = await api("GET", "/v1/working?" + q(params));
  $("working-entries").tBodies[0].replaceChildren(...page.items.map((e) =>
    h("tr", {}, h("th", { scope: "row", text: e.key }), h("td", {}, h("pre", { text: json(e.value) })),
      h("td", {}, e.category ? h("span", { class: "badge", text: e.category }) : null, " ", e.tags.map((t) => h("span", { class: "chip", text: t }))),
      h("td", { class: "num ttl", "data-expires": e.expires_at, title: "expires at " + iso(e.expires_at) }))));
  if (!page.items.length) say("No entries in this namespace.");
  tickTtl();
  if (!ttlTimer) ttlTimer = setInterval(tickTtl, 1000);
}

function tickTtl() {
  const now = Date.now() / 1000;
  document.querySelectorAll("#working-entries td.ttl").forEach((cell) => {
    const left = Math.max(0, Date.parse(cell.dataset.expires) / 1000 - now);
    cell.textContent = left <= 0 ? "expired" : left >= 60 ? Math.floor(left / 60) + " min " + Math.floor(left % 60) + " s" : Math.floor(left) + " s";
  });
}

// -- shared boards --------------------------------------------------------------------------
function stopBoard() {
  if (boardStream) { boardStream.abort(); boardStream = null; }
}

function boardRow(key, value, when) {
  return h("tr", { "data-key": key }, h("th", { scope: "row", text: key }), h("td", {}, h("pre", { text: json(value) })), h("td", { class: "num", text: when || "" }));
}

function applyChange(change) {
  const body = $("board-keys").tBodies[0];
  const existing = [...body.rows].find((r) => r.dataset.key === change.key);
  const deleted = !("value" in change);
  if (deleted) existing?.remove();
  else {
    const row = boardRow(change.key, change.value, iso(change.timestamp));
    row.classList.add("flash");
    row.dataset.at = String(Date.now());  // when it reached the screen (the benchmark reads it)
    if (existing) existing.replaceWith(row); else body.append(row);
  }
  const log = $("board-log");
  log.prepend(h("li", { text: iso(change.timestamp) + " " + change.key + (deleted ? " deleted" : " = " + JSON.stringify(change.value)).slice(0, 200) }));
  while (log.children.length > 50) log.lastElementChild.remove();
  document.body.dataset.boardChange = change.key + "=" + JSON.stringify(change.value ?? null);
}

async function watchBoard(event) {
  if (event) event.preventDefault();
  stopBoard();
  const name = $("board-name").value.trim() || "default";
  const controller = new AbortController();
  boardStream = controller;
  $("board-log").replaceChildren();
  const state = $("board-state");
  state.textContent = "connecting…";
  try {
    const response = await fetch("/ui/api/shared/" + enc(name) + "/events", { headers: headers({ Accept: "text/event-stream" }), signal: controller.signal });
    if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
        let kind = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) kind = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (!data) continue;
        const payload = JSON.parse(data);
        if (kind === "snapshot") {
          $("board-keys").tBodies[0].replaceChildren(...Object.entries(payload.snapshot).map(([k, v]) => boardRow(k, v, "")));
          state.textContent = "live: " + name + " (" + Object.keys(payload.snapshot).length + " keys)";
          document.body.dataset.boardLive = name;
        } else if (kind === "change") applyChange(payload);
      }
    }
    state.textContent = "stream closed";
  } catch (error) {
    if (error.name === "AbortError") return;
    state.textContent = "not live";
    fail(error);
  }
}

// -- dream records -------------------------------------------------------------------------
function dreamScope() { return $("dream-scope").value.trim() || "default"; }

async function loadDream(event) {
  if (event) event.preventDefault();
  const page = await api("GET", "/v1/dream/records?" + q({ scope: dreamScope(), limit: 200 }));
  $("dream-records").tBodies[0].replaceChildren(...page.items.map((r) =>
    h("tr", { "data-record-id": r.id },
      h("td", { class: "num" }, h("button", { type: "button", class: "link", "aria-label": iso(r.at) + ": open record " + r.id + " (" + r.kind + ", " + r.status + ")",
        text: iso(r.at) || r.id, onclick: () => openDream(r.id).catch(fail) })),
      h("td", {}, h("span", { class: "badge", text: r.kind })), h("td", { text: r.model || "–" }),
      h("td", { class: "num", text: String(r.retired_count) }), h("td", { class: "num", text: String(r.created_count) }),
      h("td", {}, h("span", { class: "badge status-" + r.status, text: r.status })))));
  say(page.items.length ? "" : "No dream records in scope " + dreamScope() + ".");
}

function dreamEntry(e, extra) {
  return h("li", { class: "entry", "data-entry-id": e.id },
    h("p", { text: e.content }),
    h("p", { class: "hint" }, "id " + e.id, e.category ? " · " + e.category : "", e.tags.length ? " · " + e.tags.join(", ") : "",
      " · created " + iso(e.created_at), extra || ""));
}

async function openDream(id) {
  const r = await api("GET", "/v1/dream/records/" + enc(id) + "?" + q({ scope: dreamScope() }));
  const parts = [
    h("h3", { text: "Record " + r.id + " · " + r.kind + " · " + r.status }),
    h("p", { class: "summary", text: "At " + iso(r.at) + (r.model ? " · model " + r.model : "") + (r.undone_at ? " · undone " + iso(r.undone_at) : "") +
      (r.reason ? " · " + r.reason : "") + (r.dropped ? " · " + count(r.dropped, "plan item") + " dropped" : "") }),
    h("div", { class: "diff" },
      h("section", { "aria-label": "Retired entries", class: "retired" }, h("h4", { text: "Retired (" + r.retired.length + ")" }),
        h("ul", { class: "entries" }, r.retired.map((e) => dreamEntry(e)))),
      h("section", { "aria-label": "Created entries", class: "created" }, h("h4", { text: "Created (" + r.created.length + ")" }),
        h("ul", { class: "entries" }, r.created.map((e) => dreamEntry(e, e.source_ids && e.source_ids.length ? " · from " + e.source_ids.join(", ") : ""))))),
  ];
  if (r.status === "applied") {
    parts.push(h("button", { type: "button", class: "danger", text: "Undo this pass", "aria-label": "Undo this pass: record " + r.id,
      onclick: () => undoDream(r).catch(fail) }));
  }
  parts.push(h("div", { id: "dream-undo", role: "status" }));
  $("dream-detail").replaceChildren(...parts);
}

async function undoDream(r) {
  if (!confirm("Undo the " + r.kind + " pass " + r.id + "? Retired entries come back; created ones are removed unless edited since.")) return;
  const report = await api("POST", "/v1/dream/records/" + enc(r.id) + "/undo?" + q({ scope: dreamScope() }));
  await loadDream();
  await openDream(r.id);
  $("dream-undo").replaceChildren(h("h4", { text: "Undo report" }),
    h("p", { id: "dream-undo-summary", text: count(report.restored.length, "entry", "entries") + " restored · " + report.removed.length + " removed · " + report.kept.length + " kept" }),
    h("pre", { text: json(report) }));
  say("Undid " + r.id + ".");
}

// -- forget ---------------------------------------------------------------------------------
async function forgetOne(event) {
  event.preventDefault();
  const kind = $("forget-kind").value, value = $("forget-value").value.trim();
  if (!value) return;
  if (!confirm("Forget " + kind + " " + value + " everywhere in this tenant? This cannot be undone.")) return;
  const report = await api("POST", "/v1/forget", { [kind]: value });
  const rows = Object.entries(report.deleted).map(([tier, n]) =>
    h("tr", {}, h("th", { scope: "row", text: tier }), h("td", { class: "num", text: String(n) })));
  $("forget-report").replaceChildren(
    h("h3", { text: "Deletion report" }),
    h("p", { id: "forget-summary", text: "Forgot " + kind + " " + value + ": " + count(report.total, "key", "keys") + " removed, " + report.remaining + " remaining" + (report.complete ? "." : " (incomplete: run it again).") }),
    h("table", { id: "forget-table" }, h("caption", { class: "sr-only", text: "Removed per tier" }),
      h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "Tier" }), h("th", { scope: "col", text: "Removed" }))),
      h("tbody", {}, ...rows)));
  say("Forgot " + kind + " " + value + ".");
}

// -- start ----------------------------------------------------------------------------------
document.addEventListener("DOMContentLoaded", () => {
  $("signin-form").addEventListener("submit", signIn);
  $("signout").addEventListener("click", () => signOut(""));
  document.querySelectorAll("#tabs button").forEach((b) => b.addEventListener("click", () => show(b.dataset.view)));
  $("tabs").addEventListener("keydown", (event) => {
    if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
    const buttons = [...$("tabs").querySelectorAll("button")];
    const at = buttons.indexOf(document.activeElement);
    const next = buttons[(at + (event.key === "ArrowRight" ? 1 : buttons.length - 1)) % buttons.length];
    next.focus(); next.click();
  });
  arrowKeys($("session-list")); arrowKeys($("conversation-list"));
  $("memory-search").addEventListener("submit", (e) => searchMemories(e).catch(fail));
  $("working-form").addEventListener("submit", (e) => loadWorking(e).catch(fail));
  $("board-form").addEventListener("submit", watchBoard);
  $("dream-form").addEventListener("submit", (e) => loadDream(e).catch(fail));
  $("forget-form").addEventListener("submit", (e) => forgetOne(e).catch(fail));
  window.addEventListener("hashchange", () => { if (!$("tabs").hidden) show(location.hash.slice(1)); });
  start().finally(() => { document.body.dataset.ready = "1"; });
});
