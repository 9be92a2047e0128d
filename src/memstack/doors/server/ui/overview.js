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
  say("");
}
