// Paged listings (await one page, iterate every item) and AbortSignal on every call.

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";
import { Memstack } from "../src/index.js";
import { type Served, servedClient } from "./_server.js";

let server: Served;
let mem: Memstack;

servedClient((s, m) => {
  server = s;
  mem = m;
});

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("paging", () => {
  test("sessions: await gives one page, for await gives every id, pages() every page", async () => {
    const ids = Array.from({ length: 7 }, (_, n) => `p${n}`);
    for (const id of ids) await mem.sessions.create({ session_id: id });
    const first = await mem.sessions.list({ limit: 3 });
    assert.deepEqual(first, { items: ["p0", "p1", "p2"], next_cursor: "p2" });
    assert.deepEqual(await all(mem.sessions.list({ limit: 3 })), ids);
    const pages = await all(mem.sessions.list({ limit: 3 }).pages());
    assert.deepEqual(
      pages.map((p) => p.items.length),
      [3, 3, 1],
    );
    assert.equal(pages.at(-1)?.next_cursor, null);
    assert.deepEqual(await all(mem.sessions.list({ limit: 3, cursor: "p4" })), ["p5", "p6"]);
  });

  test("every id listing pages the same way", async () => {
    for (const n of [1, 2, 3]) {
      await mem.conversations.append(`c${n}`, { role: "user", content: "hi" });
      await mem.memories.save({ scope: `scope${n}`, content: "a fact" });
      await mem.working.set("k", { namespace: `session/w${n}`, value: n });
      await mem.shared.put(`board${n}`, "k", { value: n });
    }
    assert.deepEqual(await all(mem.conversations.list({ limit: 1 })), ["c1", "c2", "c3"]);
    assert.deepEqual(await all(mem.memories.scopes({ limit: 1 })), ["scope1", "scope2", "scope3"]);
    assert.deepEqual(await all(mem.working.namespaces({ limit: 1 })), ["session/w1", "session/w2", "session/w3"]);
    assert.deepEqual(await all(mem.shared.list({ limit: 2 })), ["board1", "board2", "board3"]);
  });

  test("a conversation's messages page by position", async () => {
    for (let n = 0; n < 7; n++) {
      await mem.conversations.append("long", { role: n % 2 ? "assistant" : "user", content: `m${n}` });
    }
    const page = await mem.conversations.messages("long", { limit: 3 });
    assert.deepEqual(
      page.items.map((m) => m.content),
      ["m0", "m1", "m2"],
    );
    const every = await all(mem.conversations.messages("long", { limit: 3 }));
    assert.deepEqual(
      every.map((m) => m.content),
      ["m0", "m1", "m2", "m3", "m4", "m5", "m6"],
    );
    const rest = await all(mem.conversations.messages("long", { start: 5, limit: 3 }));
    assert.deepEqual(
      rest.map((m) => m.content),
      ["m5", "m6"],
    );
  });
});

describe("abort", () => {
  test("an aborted signal rejects at once with its reason", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop here"));
    await assert.rejects(mem.sessions.list({}, { signal: controller.signal }), /stop here/);
    await assert.rejects(mem.info.get({ signal: AbortSignal.abort() }), { name: "AbortError" });
  });

  test("aborting a long poll ends the call; the server goes on serving", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const poll = mem.shared.get("quiet", "never", { wait: 30 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await assert.rejects(poll, { name: "AbortError" });
    assert.ok(Date.now() - started < 20_000, "the call waited for the poll instead of the abort");
    assert.equal((await mem.info.get()).engine, "sqlite");
  });

  test("a listing's iteration stops when aborted", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const id of mem.sessions.list({ limit: 2 }, { signal: controller.signal })) {
        seen.push(id);
        controller.abort();
      }
    }, { name: "AbortError" });
    assert.equal(seen.length, 2);
  });
});
