// memstack inspector: the memory loop. Remember a user's messages (POST /v1/remember) and recall
// what is known about them (POST /v1/recall), with each answer's provenance. Loaded after app.js,
// whose helpers (h, api, say, count, enc...) it uses; every value is set as text, never markup.
"use strict";

const LOOP_ROLES = ["user", "assistant", "system", "tool"];
const LOOP_KINDS = { fact: "extracted fact", turn: "conversation turn", memory: "saved memory" };
let loopRows = 0;
let recallTurn = 0;

// The users offered: a user's turns live in the long-term scope named after them.
async function loadLoop() {
  const page = await api("GET", "/v1/memory-scopes?" + q({ limit: 200 }));
  $("loop-users").replaceChildren(...page.items.map((id) => h("option", { value: id })));
  if (!$("loop-messages").children.length) addLoopMessage();
  say("");
}

// One message to remember: its role and its text, removable while more than one is left. Ids
// stay unique; labels say the message's place in the list.
function addLoopMessage() {
  const n = ++loopRows;
  const previous = [...document.querySelectorAll("#loop-messages .loop-role")].pop();
  const role = h("select", { id: "loop-role-" + n, class: "loop-role" }, LOOP_ROLES.map((r) => h("option", { value: r, text: r })));
  // Turns alternate: a new message answers the one above it.
  if (previous) role.value = previous.value === "user" ? "assistant" : "user";
  const content = h("textarea", { id: "loop-content-" + n, class: "loop-content", rows: 2 });
  const item = h("li", { class: "loop-message" },
    h("label", { for: role.id, class: "sr-only" }), role, h("label", { for: content.id, class: "sr-only" }), content,
    h("button", { type: "button", class: "danger", text: "Remove",
      onclick: () => { if ($("loop-messages").children.length > 1) { item.remove(); relabelLoop(); } } }));
  $("loop-messages").append(item);
  relabelLoop();
  return content;
}

function relabelLoop() {
  [...$("loop-messages").children].forEach((item, i) => {
    const [role, content] = item.querySelectorAll("label");
    role.textContent = "Role of message " + (i + 1);
    content.textContent = "Text of message " + (i + 1);
    item.querySelector("button").setAttribute("aria-label", "Remove message " + (i + 1));
  });
}

function loopUser() {
  const user = $("loop-user").value.trim();
  if (!user) { $("loop-user").focus(); throw new Error("Type the user id first."); }
  return user;
}

async function rememberLoop(event) {
  event.preventDefault();
  const user = loopUser();
  const messages = [...document.querySelectorAll("#loop-messages .loop-message")]
    .map((li) => ({ role: li.querySelector("select").value, content: li.querySelector("textarea").value }))
    .filter((m) => m.content.trim());
  if (!messages.length) { say("Type a message to remember.", true); return; }
  const body = { user, messages };
  const conversation = $("loop-conversation").value.trim();
  if (conversation) body.conversation = conversation;
  let done;
  try {
    done = await api("POST", "/v1/remember", body);
  } catch (error) {
    // Said beside the form too: the typed turns stay, to be corrected rather than retyped.
    if (!(error instanceof ApiError) || error.status !== 401) {
      $("loop-remembered").replaceChildren(h("p", { class: "summary bad", id: "loop-remember-refused",
        text: "Not remembered: " + (error.message || String(error)) }));
    }
    throw error;
  }
  showRemembered(done);
  // The form is ready for the next turns of the same user and conversation.
  $("loop-messages").replaceChildren();
  addLoopMessage();
  await loadLoop();
  say("Remembered " + count(done.messages.length, "message") + " for " + done.user + ".");
}

// What remember did: the conversation, each message appended with its id, and the extract pass.
function showRemembered(done) {
  const extract = done.queued
    ? h("span", { class: "badge extract-queued", text: "extract queued" })
    : h("span", { class: "badge extract-skipped", text: "extract skipped" });
  const why = done.queued
    ? " An extract pass for this user runs once their conversation is quiet; its facts then show in recall."
    : " The server has no chat model: the turns are searchable, no facts are extracted from them.";
  // Each message with its id, and the entry of the user's scope that makes it searchable.
  const rows = done.messages.map((m, i) => h("tr", { "data-message-id": m.message_id },
    h("td", { class: "role", text: m.role }),
    h("td", {}, h("div", { text: m.content }), h("div", { class: "hint" }, "message ", h("code", { text: m.message_id }),
      done.entries[i] ? [" · searchable as ", h("a", { href: "#memories/" + enc(done.user) + "/" + enc(done.entries[i].id), text: done.entries[i].id })] : null))));
  $("loop-remembered").replaceChildren(
    h("p", { id: "loop-remembered-summary", class: "summary" },
      "Remembered " + count(done.messages.length, "message") + " of " + done.user + " in conversation ",
      h("a", { href: "#conversations/" + enc(done.conversation), text: done.conversation }), " · ", extract, why),
    h("div", { class: "table-wrap" }, h("table", { id: "loop-remembered-table", "aria-label": "Messages remembered" },
      h("thead", {}, h("tr", {}, ["Role", "Message"].map((t) => h("th", { scope: "col", text: t })))),
      h("tbody", {}, rows))));
}

async function recallLoop(event) {
  event.preventDefault();
  const user = loopUser();
  const query = $("loop-query").value.trim();
  if (!query) { $("loop-query").focus(); say("Type what to recall.", true); return; }
  const turn = ++recallTurn;
  const answer = await api("POST", "/v1/recall", { query, user, limit: Number($("loop-limit").value) || 10 });
  if (turn !== recallTurn) return;  // a newer recall was asked meanwhile: its answer wins
  $("loop-recall-summary").textContent = count(answer.items.length, "result") + " for “" + query + "” · user " + user;
  $("loop-results").tBodies[0].replaceChildren(...answer.items.map((item, i) => recalledRow(item, i + 1, user)));
  say("");
}

// Where an item comes from: its conversations (links to their trees) and message ids.
function provenance(item) {
  const parts = [];
  if (item.conversations.length) {
    parts.push(h("div", { class: "loop-conversations" }, "conversation ",
      item.conversations.map((c, i) => [i ? ", " : "", h("a", { href: "#conversations/" + enc(c), text: c })])));
  }
  if (item.message_ids.length) {
    parts.push(h("div", { class: "loop-message-ids" }, "message ",
      item.message_ids.map((m, i) => [i ? ", " : "", h("code", { text: m })])));
  }
  return parts.length ? parts : h("span", { class: "hint", text: "none recorded" });
}

function recalledRow(item, rank, user) {
  const e = item.entry;
  return h("tr", { "data-memory-id": e.id, "data-kind": item.kind },
    h("td", { class: "num", text: String(rank) }),
    h("td", { class: "kind" }, h("span", { class: "badge kind-" + (LOOP_KINDS[item.kind] ? item.kind : "other"), title: LOOP_KINDS[item.kind] || "", text: item.kind })),
    h("td", { class: "num", text: num(item.score) }),
    h("td", {}, h("div", { text: e.content }),
      h("div", { class: "hint" }, h("a", { href: "#memories/" + enc(user) + "/" + enc(e.id), text: e.id }), " · ", h("time", { datetime: e.created_at, text: iso(e.created_at) }))),
    h("td", { class: "provenance" }, provenance(item)));
}

// The turn-log entries written before turns went to conversations, copied into them (POST
// /v1/turns/migrate): the number copied, 0 once every entry is in its conversation.
async function migrateTurns() {
  const done = await api("POST", "/v1/turns/migrate");
  $("loop-migrate-summary").textContent = done.copied
    ? "Copied " + count(done.copied, "turn-log entry", "turn-log entries") + " into conversations."
    : "Nothing to copy: every turn-log entry is in its conversation.";
}

document.addEventListener("DOMContentLoaded", () => {
  // A conversation is one user's: another user id starts from their own (the default), and the
  // last remember answer (another user's messages) is cleared.
  $("loop-user").addEventListener("change", () => { $("loop-conversation").value = ""; $("loop-remembered").replaceChildren(); });
  $("loop-add").addEventListener("click", () => addLoopMessage().focus());
  $("loop-remember").addEventListener("submit", (e) => rememberLoop(e).catch(fail));
  $("loop-recall").addEventListener("submit", (e) => recallLoop(e).catch(fail));
  $("loop-migrate").addEventListener("click", () => migrateTurns().catch(fail));
});
