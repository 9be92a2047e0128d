// memstack inspector: plain DOM, no build step, no network beyond this server's /v1 API.
// Every value from the server is set with textContent (never innerHTML).
"use strict";

const $ = (id) => document.getElementById(id);
const auth = { key: sessionStorage.getItem("memstack.key") || "", tenant: sessionStorage.getItem("memstack.tenant") || "" };
let boardStream = null;
let ttlTimer = null;
let searchTurn = 0;
// The id picked in each view's list (every tier's ids are listed, a page at a time).
const picked = { scope: null, namespace: null, board: null, dreamScope: null };

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
  show(location.hash.slice(1) || "overview");
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
// Every view once, in tab order: its title (the heading; tab: when the tab says less), its list of
// ids (list: the ids of the list and its "More" button; label: the list's name) and its loader. The loaders live in tiers.js, lifecycle.js, overview.js and loop.js (loaded after this file). A
// Map, not an object: a hash such as #constructor or #__proto__ names no view.
const views = new Map(Object.entries({
  overview: { title: "Overview", load: () => loadOverview() },
  sessions: { title: "Sessions", list: "session", label: "Sessions", load: () => loadSessions() },
  conversations: { title: "Conversations", list: "conversation", label: "Conversations", load: () => loadConversations() },
  memories: { title: "Long-term memories", list: "scope", label: "Scopes", load: () => loadScopes() },
  working: { title: "Working memory", list: "namespace", label: "Namespaces", load: () => loadNamespaces() },
  shared: { title: "Shared boards", list: "board", label: "Boards", load: () => loadBoards() },
  loop: { title: "Remember / recall", load: () => loadLoop() },
  dream: { title: "Dream records", tab: "Dream", list: "dream-scope", label: "Dream scopes", more: "More scopes", load: () => loadDreamScopes() },
  forget: { title: "Forget", load: () => loadForgetOptions() },
}));

// A hash is a view, or a deep link into one: #memories/SCOPE/ID, #dream/SCOPE/RECORD,
// #conversations/ID, #sessions/ID (each part percent-encoded).
function show(hash) {
  const [first, ...rest] = String(hash).split("/");
  const name = views.has(first) ? first : "sessions";
  const parts = views.has(first) ? rest.map(decodeURIComponent) : [];
  document.querySelectorAll(".view").forEach((v) => { v.hidden = v.id !== "view-" + name; });
  document.querySelectorAll("#tabs button").forEach((b) => {
    if (b.dataset.view === name) b.setAttribute("aria-current", "page"); else b.removeAttribute("aria-current");
  });
  const canonical = [name, ...parts.map(enc)].join("/");
  if (location.hash !== "#" + canonical) history.replaceState(null, "", "#" + canonical);
  if (name !== "shared") stopBoard();
  if (name !== "working" && ttlTimer) { clearInterval(ttlTimer); ttlTimer = null; }
  // A linked scope is picked before its list loads, so the list marks it as the current one.
  if (parts.length && name === "memories") picked.scope = parts[0];
  if (parts.length && name === "dream") picked.dreamScope = parts[0];
  views.get(name).load().then(() => (parts.length ? openLink(name, parts) : null)).catch(fail);
}

// What a deep link opens once its view is loaded.
function openLink(name, [id, inner]) {
  if (name === "sessions") return openSession(id);
  if (name === "conversations") return openConversation(id);
  if (name === "memories") { picked.scope = id; return inner ? showMemory(inner) : searchMemories(); }
  if (name === "dream") { picked.dreamScope = id; return loadDream().then(() => (inner ? openDream(inner) : null)); }
  return null;
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

async function pagedList(path, listId, moreId, label, onPick, cursor, current) {
  const list = $(listId);
  if (!cursor) list.replaceChildren();
  const page = await api("GET", path + "?" + q({ limit: 200, cursor }));
  for (const id of page.items) {
    const item = pickable(list, id, id, onPick);
    if (id === current) item.firstChild.setAttribute("aria-current", "true");
    list.append(item);
  }
  const more = $(moreId);
  more.hidden = !page.next_cursor;
  more.onclick = () => pagedList(path, listId, moreId, label, onPick, page.next_cursor, current).catch(fail);
  if (!cursor) say(page.items.length ? "" : "No " + label + " yet.");
}

// A table's head: one column header per name.
function tableHead(columns) {
  return h("thead", {}, h("tr", {}, columns.map((name) => h("th", { scope: "col", text: name }))));
}

// -- start ----------------------------------------------------------------------------------
// Each view gets its tab and its heading; a view with a list of ids is split: the list pane (the
// list and its "More" button for the next page) beside the detail pane holding the view's content.
function buildViews() {
  for (const [name, view] of views) {
    const section = $("view-" + name);
    const heading = h("h2", { id: "h-" + name, text: view.title });
    $("tabs").append(h("button", { type: "button", "data-view": name, text: view.tab || view.title }));
    section.setAttribute("aria-labelledby", heading.id);
    if (!view.list) { section.prepend(heading); continue; }
    const pane = h("div", { class: "list-pane" },
      h("ul", { id: view.list + "-list", class: "items", "aria-label": view.label }),
      h("button", { id: view.list + "-more", type: "button", hidden: true, text: view.more || "More " + view.label.toLowerCase() }));
    section.replaceChildren(heading, h("div", { class: "split" }, pane, h("div", { class: "detail" }, [...section.children])));
  }
}

// The static tables name their columns (data-columns, "|" between) and caption (data-caption).
function buildTables() {
  for (const table of document.querySelectorAll("table[data-columns]")) {
    if (table.dataset.caption) table.append(h("caption", { class: "sr-only", text: table.dataset.caption }));
    table.append(tableHead(table.dataset.columns.split("|")), h("tbody"));
  }
}

document.addEventListener("DOMContentLoaded", () => {
  buildViews();
  buildTables();
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
  $("dream-run").addEventListener("submit", (e) => runDream(e).catch(fail));
  $("working-form").addEventListener("submit", (e) => loadWorking(e).catch(fail));
  $("board-form").addEventListener("submit", watchBoard);
  $("forget-form").addEventListener("submit", (e) => forgetOne(e).catch(fail));
  $("forget-kind").addEventListener("change", () => loadForgetOptions().catch(fail));
  for (const list of ["scope-list", "namespace-list", "board-list", "dream-scope-list"]) arrowKeys($(list));
  window.addEventListener("hashchange", () => { if (!$("tabs").hidden) show(location.hash.slice(1)); });
  start().finally(() => { document.body.dataset.ready = "1"; });
});
