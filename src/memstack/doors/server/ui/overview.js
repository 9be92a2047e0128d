"use strict";
// The first screen: what this tenant holds, tier by tier, each count a link to its view; and, when a
// tier is empty, the command that adds data to it (nothing to guess on a fresh server).

const TIERS = [
  { view: "sessions", label: "Sessions", path: "/v1/sessions",
    add: ".venv/bin/memstack sessions put s1 topic '\"billing\"' --create" },
  { view: "conversations", label: "Conversations", path: "/v1/conversations",
    add: ".venv/bin/memstack conversations add c1 user 'Hello!'" },
  { view: "memories", label: "Long-term memory scopes", path: "/v1/memory-scopes",
    add: ".venv/bin/memstack memories save 'Ana lives in Lisbon' --scope ana" },
  { view: "working", label: "Working-memory namespaces", path: "/v1/working-namespaces",
    add: ".venv/bin/memstack working set draft '{\"to\": \"bob\"}' --namespace session/s1" },
  { view: "shared", label: "Shared boards", path: "/v1/shared",
    add: ".venv/bin/memstack shared put team plan '[\"research\", \"write\"]'" },
];
const PAGE = 200;
// The feed reads the newest changes of this many sessions and memory scopes (the first listed):
// a bounded number of small requests, so the first screen stays quick on a big tenant.
const FEED_SOURCES = 10;
const FEED_SHOWN = 10;

async function loadOverview() {
  const pages = await Promise.all(TIERS.map((tier) => api("GET", tier.path + "?" + q({ limit: PAGE }))));
  const rows = TIERS.map((tier, i) => {
    const page = pages[i];
    const n = page.items.length + (page.next_cursor ? "+" : "");
    const latest = page.items.length ? page.items.slice(-1)[0] : "";
    return h("tr", { "data-tier": tier.view },
      h("th", { scope: "row" }, h("a", { href: "#" + tier.view, text: tier.label })),
      h("td", { class: "num", text: String(n) }),
      h("td", {}, page.items.length ? "last listed: " + latest : h("code", { text: tier.add })));
  });
  $("overview-tiers").tBodies[0].replaceChildren(...rows);
  const empty = pages.every((page) => !page.items.length);
  $("overview-empty").hidden = !empty;
  await loadActivity(pages[0].items, pages[2].items);
  say("");
}

// The latest changes across tiers, newest first: each session's last write (its history) and each
// scope's newest memories (created or updated), merged by time. Conversations and the working and
// shared tiers answer no cheap "newest change with its time", so they are left out (said below).
async function loadActivity(sessions, scopes) {
  const quiet = (promise) => promise.catch(() => null); // a tier gone meanwhile: skip it
  const fromSessions = sessions.slice(0, FEED_SOURCES).map(async (id) => {
    const data = await quiet(api("GET", `/v1/sessions/${encodeURIComponent(id)}/history?` + q({ limit: 1 })));
    const last = data?.entries?.[0];
    return last ? [{ at: last.timestamp, href: "#sessions/" + encodeURIComponent(id),
                     text: `session ${id}: ${last.op} ${last.key ?? ""}`.trim() }] : [];
  });
  const fromScopes = scopes.slice(0, FEED_SOURCES).map(async (scope) => {
    const data = await quiet(api("GET", "/v1/memories?" + q({ scope, limit: FEED_SHOWN })));
    return (data?.items ?? []).map(({ entry }) => ({
      at: entry.updated_at || entry.created_at,
      href: `#memories/${encodeURIComponent(scope)}/${encodeURIComponent(entry.id)}`,
      text: `memory in ${scope} ${entry.updated_at ? "updated" : "saved"}: ${entry.content}`,
    }));
  });
  const events = (await Promise.all([...fromSessions, ...fromScopes])).flat();
  events.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  const rows = events.slice(0, FEED_SHOWN).map((event) =>
    h("li", {}, h("time", { datetime: event.at, text: event.at.replace("T", " ").slice(0, 19) + " " }),
      h("a", { href: event.href, text: event.text })));
  $("overview-activity").replaceChildren(...rows);
  $("overview-activity-none").hidden = rows.length > 0;
}
