// memstack inspector: the views of the tiers (sessions, conversations, long-term memories, working
// memory, shared boards). Loaded after app.js, whose helpers (h, api, say, pagedList...) they use.
"use strict";

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
      tableHead(["Key", "Value"]), values)),
    h("h3", { text: "History (" + hist.entries.length + ", oldest first; summaries included)" }),
    h("div", { class: "table-wrap" }, h("table", { "aria-label": "History of session " + id },
      tableHead(["Time (UTC)", "Operation", "Key", "Details"]), entries)),
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
function scope() { return picked.scope || "default"; }

function loadScopes() {
  return pagedList("/v1/memory-scopes", "scope-list", "scope-more", "scopes", pickScope, null, picked.scope);
}

function pickScope(id) { picked.scope = id; return searchMemories(); }

async function searchMemories(event) {
  if (event) event.preventDefault();
  if (!picked.scope) { say("Pick a scope."); return; }
  const started = performance.now();
  const turn = ++searchTurn;
  const params = { scope: scope(), query: $("memory-query").value.trim(), category: $("memory-category").value.trim(), limit: 50,
    include_history: $("memory-history").checked || null, include_expired: $("memory-expired").checked || null, as_of: $("memory-as-of").value.trim() };
  const [page, cats, tags, counted] = await Promise.all([
    api("GET", "/v1/memories?" + q(params)),
    api("GET", "/v1/memory-categories?" + q({ scope: scope() })),
    api("GET", "/v1/memory-tags?" + q({ scope: scope() })),
    api("GET", "/v1/memory-count?" + q({ scope: scope() })),
  ]);
  if (turn !== searchTurn) return;  // a newer search was started meanwhile: its answer wins
  const mode = page.items.length ? [...new Set(page.items.flatMap((hit) => hit.sources))].sort().join(" + ") : "";
  $("memory-summary").textContent = "Scope " + params.scope + " · " + (params.query
    ? count(page.items.length, "result") + " for “" + params.query + "”" + (mode ? " · mode: " + mode : "")
    : count(page.items.length, "newest memory", "newest memories"));
  // Scores exist only where a search made them: a blank query lists the newest, unranked.
  $("memory-results").tBodies[0].replaceChildren(...page.items.map((hit) => memoryRow(hit, Boolean(params.query))));
  $("memory-categories").replaceChildren(...cats.items.map((c) => h("li", {}, h("button", { type: "button", class: "chip", text: c,
    onclick: () => { $("memory-category").value = c; searchMemories().catch(fail); } }))));
  $("category-options").replaceChildren(...cats.items.map((c) => h("option", { value: c })));
  $("memory-tags").replaceChildren(...tags.items.map((t) => h("li", { class: "chip", text: t })));
  $("memory-count").textContent = counted.stored + " stored · " + counted.current + " current";
  document.body.dataset.searchMs = String(Math.round(performance.now() - started));
}

// When the fact holds and when the entry goes: valid from/to, who replaced it, its expiry.
function validity(e) {
  const parts = ["valid from " + iso(e.valid_from)];
  if (e.valid_to) parts.push("until " + iso(e.valid_to) + (e.superseded_by ? " (superseded by " + e.superseded_by + ")" : ""));
  if (e.expires_at) parts.push("expires " + iso(e.expires_at));
  return parts.join(" · ");
}

// One memory by its id (a deep link): the only row, unscored.
async function showMemory(id) {
  const entry = await api("GET", "/v1/memories/" + enc(id) + "?" + q({ scope: scope() }));
  $("memory-summary").textContent = "Scope " + scope() + " · memory " + id;
  $("memory-results").tBodies[0].replaceChildren(memoryRow({ entry, score: null, bm25: null, vector: null, sources: [] }, false));
}

// The fused score as its terms: what BM25 explained, what the vector margin added, and what the
// conversation (neighbouring turns, speaker, session) brought on top. Absent when the search's
// fusion is not such a sum (BM25 alone, another fusion profile, a reranked search).
function scoreParts(hit) {
  if (hit.bm25_part === null || hit.bm25_part === undefined) return null;
  const rest = hit.score - hit.bm25_part - hit.vector_part;
  const text = "BM25 " + num(hit.bm25_part) + " + vector " + num(hit.vector_part) +
    (Math.abs(rest) >= 0.0005 ? " + conversation " + num(rest) : "");
  return h("div", { class: "hint score-parts", text });
}

function memoryRow(hit, searched) {
  const e = hit.entry;
  const state = e.superseded_by ? h("span", { class: "badge state-superseded", text: "superseded" }) : null;
  const row = h("tr", { "data-memory-id": e.id, class: e.superseded_by ? "superseded" : null },
    h("td", {}, h("div", {}, state, state ? " " : "", e.content), h("div", { class: "hint", text: e.id }),
      h("div", { class: "hint validity", text: validity(e) })),
    h("td", {}, e.category ? h("span", { class: "badge", text: e.category }) : null, " ", e.tags.map((t) => h("span", { class: "chip", text: t }))),
    h("td", { class: "num" }, h("div", { text: searched ? num(hit.score) : "–" }), searched ? scoreParts(hit) : null),
    h("td", { class: "num", text: searched ? num(hit.bm25) : "–" }),
    h("td", { class: "num", text: searched ? num(hit.vector) : "–" }), h("td", { class: "num", text: iso(e.created_at) }),
    h("td", { class: "actions" }, h("button", { type: "button", "aria-label": "Edit memory " + e.id, text: "Edit", onclick: () => editMemory(row, e) }), " ",
      h("button", { type: "button", "aria-label": "History of memory " + e.id, text: "History", onclick: () => memoryHistory(row, e).catch(fail) }), " ",
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
        expires_at: e.expires_at,  // an update replaces the expiry with what it gives: keep it
      });
      say("Saved " + e.id + ".");
      await searchMemories();
    } catch (error) { fail(error); }
  });
  const editRow = h("tr", { class: "edit-row" }, h("td", { colspan: 7 }, form));
  row.after(editRow);
  content.focus();
}

// Every change of one entry, oldest first: what it said before and after, and who changed it.
async function memoryHistory(row, e) {
  if (row.nextElementSibling?.classList.contains("history-row")) { row.nextElementSibling.remove(); return; }
  const page = await api("GET", "/v1/memories/" + enc(e.id) + "/history?" + q({ scope: scope() }));
  const items = page.items.map((c) => h("li", { class: "change", "data-op": c.op },
    h("span", { class: "badge", text: c.op }), " " + iso(c.at) + " · by " + c.actor,
    c.related_ids.length ? " · related " + c.related_ids.join(", ") : "",
    c.old && c.new && c.old.content !== c.new.content ? h("div", { class: "hint", text: "was: " + c.old.content }) : null,
    c.new ? h("div", { text: c.new.content }) : null,
    c.new ? h("div", { class: "hint", text: validity(c.new) }) : null));
  const body = items.length ? h("ol", { class: "changes", "aria-label": "History of memory " + e.id }, items)
    : h("p", { class: "hint", text: "No recorded change." });
  row.after(h("tr", { class: "history-row" }, h("td", { colspan: 7 }, body)));
}

async function deleteMemory(e) {
  if (!confirm("Delete memory " + e.id + "?\n\n" + e.content)) return;
  await api("DELETE", "/v1/memories/" + enc(e.id) + "?" + q({ scope: scope() }));
  say("Deleted " + e.id + ".");
  await searchMemories();
}

// -- working memory -------------------------------------------------------------------------
function loadNamespaces() {
  return pagedList("/v1/working-namespaces", "namespace-list", "namespace-more", "namespaces", pickNamespace, null, picked.namespace);
}

function pickNamespace(id) { picked.namespace = id; return loadWorking(); }

async function loadWorking(event) {
  if (event) event.preventDefault();
  const namespace = picked.namespace;
  if (!namespace) { say("Pick a namespace."); return; }
  const prefix = $("working-prefix").value.trim();
  const params = { namespace, prefix: prefix && !prefix.includes("/") ? namespace + "/" + prefix : prefix, limit: 500 };
  const page = await api("GET", "/v1/working?" + q(params));
  $("working-entries").tBodies[0].replaceChildren(...page.items.map((e) =>
    h("tr", {}, h("th", { scope: "row", text: e.key }), h("td", {}, h("pre", { text: json(e.value) })),
      h("td", {}, e.category ? h("span", { class: "badge", text: e.category }) : null, " ", e.tags.map((t) => h("span", { class: "chip", text: t }))),
      h("td", { class: "num ttl", "data-expires": e.expires_at, title: "expires at " + iso(e.expires_at) }))));
  $("working-summary").textContent = "Namespace " + namespace + " · " + count(page.items.length, "live entry", "live entries");
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

// The keys every board has (memstack's own, from the original systems' shared memory), shown apart
// from the keys the user wrote, and only when they hold something.
const RESERVED_KEYS = new Set(["data", "results", "messages", "session_id"]);
const boardTable = (key) => $(RESERVED_KEYS.has(key) ? "board-reserved" : "board-keys");
const unset = (value) => value === null || (Array.isArray(value) ? !value.length : typeof value === "object" && !Object.keys(value).length);

function showReserved() {
  $("board-reserved-section").hidden = !$("board-reserved").tBodies[0].rows.length;
}

function applyChange(change) {
  const body = boardTable(change.key).tBodies[0];
  const existing = [...body.rows].find((r) => r.dataset.key === change.key);
  const deleted = !("value" in change);
  if (deleted) existing?.remove();
  else {
    const row = boardRow(change.key, change.value, iso(change.timestamp));
    row.classList.add("flash");
    row.dataset.at = String(Date.now());  // when it reached the screen (the benchmark reads it)
    if (existing) existing.replaceWith(row); else body.append(row);
  }
  showReserved();
  const log = $("board-log");
  log.prepend(h("li", { text: iso(change.timestamp) + " " + change.key + (deleted ? " deleted" : " = " + JSON.stringify(change.value)).slice(0, 200) }));
  while (log.children.length > 50) log.lastElementChild.remove();
  document.body.dataset.boardChange = change.key + "=" + JSON.stringify(change.value ?? null);
}

function loadBoards() {
  return pagedList("/v1/shared", "board-list", "board-more", "boards", pickBoard, null, picked.board);
}

function pickBoard(id) { picked.board = id; return watchBoard(); }

async function watchBoard(event) {
  if (event) event.preventDefault();
  stopBoard();
  const name = picked.board;
  if (!name) { say("Pick a board."); return; }
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
          const entries = Object.entries(payload.snapshot);
          const own = entries.filter(([k]) => !RESERVED_KEYS.has(k));
          $("board-keys").tBodies[0].replaceChildren(...own.map(([k, v]) => boardRow(k, v, "")));
          $("board-reserved").tBodies[0].replaceChildren(...entries.filter(([k, v]) => RESERVED_KEYS.has(k) && !unset(v)).map(([k, v]) => boardRow(k, v, "")));
          showReserved();
          state.textContent = "live: " + name + " (" + count(own.length, "key") + ")";
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
