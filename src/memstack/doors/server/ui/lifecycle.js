// memstack inspector: the views of the lifecycle (dream records and undo, forget). Loaded after
// app.js, whose helpers (h, api, say...) they use.
"use strict";

// -- dream records -------------------------------------------------------------------------
function dreamScope() { return picked.dreamScope || "default"; }

function loadDreamScopes() {
  return pagedList("/v1/memory-scopes", "dream-scope-list", "dream-scope-more", "scopes", pickDreamScope, null, picked.dreamScope);
}

function pickDreamScope(id) { picked.dreamScope = id; $("dream-detail").replaceChildren(); return loadDream(); }

async function loadDream(event) {
  if (event) event.preventDefault();
  const page = await api("GET", "/v1/dream/records?" + q({ scope: dreamScope(), limit: 200 }));
  $("dream-records").tBodies[0].replaceChildren(...page.items.map((r) =>
    h("tr", { "data-record-id": r.id },
      h("td", { class: "num" }, h("button", { type: "button", class: "link", "aria-label": iso(r.at) + ": open record " + r.id + " (" + r.kind + ", " + r.status + ")",
        text: iso(r.at) || r.id, onclick: () => openDream(r.id).catch(fail) })),
      h("td", {}, h("span", { class: "badge", text: r.kind })), h("td", { text: r.model || "–" }),
      h("td", { class: "num", text: String(r.retired_count) }), h("td", { class: "num", text: String(r.created_count) }),
      h("td", { class: "num", text: String(r.superseded_count) }),
      h("td", {}, h("span", { class: "badge status-" + r.status, text: r.status })),
      h("td", { class: "reason", text: r.reason || "" }))));
  $("dream-summary").textContent = "Scope " + dreamScope() + " · " + count(page.items.length, "dream record");
}

function dreamEntry(e, extra) {
  return h("li", { class: "entry", "data-entry-id": e.id },
    h("p", { text: e.content }),
    h("p", { class: "hint" }, "id " + e.id, e.category ? " · " + e.category : "", e.tags.length ? " · " + e.tags.join(", ") : "",
      " · created " + iso(e.created_at), extra || ""),
    h("p", { class: "hint validity", text: validity(e) }));
}

// Run (or dry-run) one pass over the picked scope; the LLM passes need the server's chat model.
async function runDream(event) {
  event.preventDefault();
  const pass = $("dream-pass").value, dry = $("dream-dry-run").checked;
  const page = await api("POST", "/v1/dream/runs?" + q({ scope: dreamScope() }), { passes: [pass], dry_run: dry });
  const parts = page.items.map((r) => r.kind + ": " + r.status + " · " + count(r.created.length, "created", "created") + ", " +
    r.retired.length + " retired, " + r.superseded.length + " superseded" + (r.reason ? " · " + r.reason : ""));
  $("dream-run-summary").textContent = parts.length ? parts.join("; ") : pass + ": nothing to do.";
  await loadDream();
  const shown = page.items.find((r) => r.status !== "dry-run") || page.items[0];
  if (shown && shown.status !== "dry-run") await openDream(shown.id);
  else if (shown) showDream(shown);
}

async function openDream(id) {
  showDream(await api("GET", "/v1/dream/records/" + enc(id) + "?" + q({ scope: dreamScope() })));
}

function showDream(r) {
  const parts = [
    h("h3", { text: "Record " + r.id + " · " + r.kind + " · " + r.status }),
    h("p", { class: "summary", text: "At " + iso(r.at) + (r.model ? " · model " + r.model : "") + (r.undone_at ? " · undone " + iso(r.undone_at) : "") +
      (r.reason ? " · " + r.reason : "") + (r.dropped ? " · " + count(r.dropped, "plan item") + " dropped" : "") }),
    h("div", { class: "diff" },
      h("section", { "aria-label": "Retired entries", class: "retired" }, h("h4", { text: "Retired (" + r.retired.length + ")" }),
        h("ul", { class: "entries" }, r.retired.map((e) => dreamEntry(e)))),
      h("section", { "aria-label": "Created entries", class: "created" }, h("h4", { text: "Created (" + r.created.length + ")" }),
        h("ul", { class: "entries" }, r.created.map((e) => dreamEntry(e, (e.source_ids && e.source_ids.length ? " · from " + e.source_ids.join(", ") : "") +
          (e.message_ids && e.message_ids.length ? " · said in " + e.message_ids.join(", ") : ""))))),
      h("section", { "aria-label": "Superseded entries", class: "superseded" }, h("h4", { text: "Superseded (" + r.superseded.length + ")" }),
        h("ul", { class: "entries" }, r.superseded.map((e) => dreamEntry(e))))),
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
// The ids each kind of thing can be picked from (a subject is a label on writes: no list).
const forgetLists = { session: "/v1/sessions", conversation: "/v1/conversations", scope: "/v1/memory-scopes", namespace: "/v1/working-namespaces", board: "/v1/shared" };

async function loadForgetOptions() {
  const path = forgetLists[$("forget-kind").value];
  const page = path ? await api("GET", path + "?" + q({ limit: 1000 })) : { items: [] };
  $("forget-options").replaceChildren(...page.items.map((id) => h("option", { value: id })));
}

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
      tableHead(["Tier", "Removed"]),
      h("tbody", {}, ...rows)));
  say("Forgot " + kind + " " + value + ".");
}
