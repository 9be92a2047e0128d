// Every namespace of the client against a real `memstack serve`: what each call writes is read back.

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";
import { EntryNotFound, InvalidValue, Memstack, SessionNotFound } from "../src/index.js";
import { type Served, servedClient } from "./_server.js";

let server: Served;
let mem: Memstack;

servedClient((s, m) => {
  server = s;
  mem = m;
});

describe("sessions", () => {
  test("create, put, get, increment, keys, show, history, clear, delete", async () => {
    assert.deepEqual(await mem.sessions.create({ session_id: "s1" }), { session_id: "s1", created: true });
    await mem.sessions.put("s1", "topic", { value: { name: "billing" } });
    assert.deepEqual((await mem.sessions.get("s1", "topic")).value, { name: "billing" });
    assert.equal((await mem.sessions.increment("s1", "n", { amount: 2 })).value, 2);
    assert.equal((await mem.sessions.increment("s1", "n")).value, 3);
    assert.deepEqual((await mem.sessions.keys("s1")).keys, ["n", "topic"]);
    const shown = await mem.sessions.show("s1");
    assert.equal(shown.key_count, 2);
    assert.deepEqual(shown.values, { n: 3, topic: { name: "billing" } });
    const history = await mem.sessions.history("s1", { limit: 0 });
    assert.ok(history.entries.length >= 3);
    assert.deepEqual((await mem.sessions.clear("s1", { key: "n" })).cleared, ["n"]);
    assert.deepEqual((await mem.sessions.keys("s1")).keys, ["topic"]);
    assert.deepEqual((await mem.sessions.clear("s1")).cleared, ["topic"]);
    await mem.sessions.delete("s1");
    await assert.rejects(mem.sessions.show("s1"), SessionNotFound);
  });

  test("put with create makes the session", async () => {
    await mem.sessions.put("fresh", "k", { value: [1, "two", null], create: true });
    assert.deepEqual((await mem.sessions.get("fresh", "k")).value, [1, "two", null]);
  });
});

describe("conversations", () => {
  test("append, message, messages, thread, history, list, delete", async () => {
    await mem.conversations.append("c1", { role: "user", content: "What is a good tea?", message_id: "m1" });
    const answer = await mem.conversations.append("c1", { role: "assistant", content: "Sencha, a green tea." });
    assert.equal(answer.parent_message_id, "m1");
    assert.equal((await mem.conversations.message("c1", "m1")).content, "What is a good tea?");
    const page = await mem.conversations.messages("c1");
    assert.deepEqual(
      page.items.map((m) => m.role),
      ["user", "assistant"],
    );
    const thread = await mem.conversations.thread("c1");
    assert.deepEqual(
      thread.items.map((m) => m.content),
      ["What is a good tea?", "Sencha, a green tea."],
    );
    const history = await mem.conversations.history("c1");
    assert.deepEqual(history.messages.at(-1), { role: "assistant", content: "Sencha, a green tea." });
    assert.ok((await mem.conversations.list()).items.includes("c1"));
    await mem.conversations.delete("c1");
    await assert.rejects(mem.conversations.message("c1", "m1"), EntryNotFound);
  });
});

describe("memories", () => {
  test("save, search with tags and a filter, get, categories, tags, scopes, delete", async () => {
    const saved = await mem.memories.save({
      scope: "alice",
      content: "Alice plays the violin",
      category: "hobby",
      tags: ["music"],
      metadata: { year: 2019 },
    });
    await mem.memories.save({ scope: "alice", id: "home", content: "Alice lives in Chicago", category: "home" });
    const hits = await mem.memories.search({ scope: "alice", query: "violin" });
    assert.equal(hits.items[0]?.entry.id, saved.id);
    const tagged = await mem.memories.search({ scope: "alice", query: "alice", tags: ["music"] });
    assert.deepEqual(
      tagged.items.map((h) => h.entry.id),
      [saved.id],
    );
    const filtered = await mem.memories.search({ scope: "alice", query: "alice", filter: JSON.stringify({ year: { $gte: 2019 } }) });
    assert.deepEqual(
      filtered.items.map((h) => h.entry.id),
      [saved.id],
    );
    assert.equal((await mem.memories.get("home", { scope: "alice" })).content, "Alice lives in Chicago");
    assert.deepEqual((await mem.memories.categories({ scope: "alice" })).items.sort(), ["hobby", "home"]);
    assert.deepEqual((await mem.memories.tags({ scope: "alice" })).items, ["music"]);
    assert.ok((await mem.memories.scopes()).items.includes("alice"));
    const counted = await mem.memories.count({ scope: "alice" });
    assert.equal(counted.scope, "alice");
    assert.ok(counted.stored >= counted.current && counted.current >= 1, JSON.stringify(counted));
    await mem.memories.delete("home", { scope: "alice" });
    const left = await mem.memories.count({ scope: "alice" });
    assert.equal(left.stored, counted.stored - 1);
    await assert.rejects(mem.memories.get("home", { scope: "alice" }), EntryNotFound);
  });

  test("saveMany saves a batch whole, or none of it", async () => {
    const saved = await mem.memories.saveMany({
      scope: "batch",
      items: [{ id: "b1", content: "Bea rows at dawn", tags: ["sport"] }, { content: "Bea reads novels" }],
    });
    assert.deepEqual(
      saved.items.map((e) => e.content),
      ["Bea rows at dawn", "Bea reads novels"],
    );
    assert.equal((await mem.memories.search({ scope: "batch", query: "rows" })).items[0]?.entry.id, "b1");
    await assert.rejects(
      mem.memories.saveMany({ scope: "batch", items: [{ id: "b3", content: "kept?" }, { content: " " }] }),
      InvalidValue,
    );
    await assert.rejects(mem.memories.get("b3", { scope: "batch" }), EntryNotFound);
  });
});

describe("working", () => {
  test("set, get, list, search, namespaces, delete, clear", async () => {
    await mem.working.set("draft", { namespace: "session/s1", value: { to: "bob" }, ttl: 300, tags: ["mail"] });
    await mem.working.set("alert", { namespace: "patrol/hb", value: "disk full" });
    assert.deepEqual((await mem.working.get("draft", { namespace: "session/s1" })).value, { to: "bob" });
    const listed = await mem.working.list({ namespace: "session/s1" });
    assert.deepEqual(
      listed.items.map((e) => e.key),
      ["session/s1/draft"],
    );
    const found = await mem.working.search({ query: "disk" });
    assert.equal(found.items[0]?.key, "patrol/hb/alert"); // a search across namespaces gives full keys
    assert.deepEqual((await mem.working.namespaces()).items, ["patrol/hb", "session/s1"]);
    await mem.working.delete("alert", { namespace: "patrol/hb" });
    await assert.rejects(mem.working.get("alert", { namespace: "patrol/hb" }), EntryNotFound);
    await mem.working.clear({ namespace: "session/s1" });
    assert.deepEqual((await mem.working.namespaces()).items, []);
  });
});

describe("shared", () => {
  test("put with versions, get, show, list, delete", async () => {
    const first = await mem.shared.put("team", "plan", { value: ["research"] });
    assert.equal(first.version, 1);
    const second = await mem.shared.put("team", "plan", { value: ["research", "write"], version: 1 });
    assert.equal(second.version, 2);
    assert.deepEqual((await mem.shared.get("team", "plan")).value, ["research", "write"]);
    assert.deepEqual((await mem.shared.show("team")).snapshot.custom, { plan: ["research", "write"] });
    assert.ok((await mem.shared.list()).items.includes("team"));
    assert.deepEqual((await mem.shared.delete("team", "plan")).previous, ["research", "write"]);
  });

  test("the cache and the documents of a board", async () => {
    await mem.shared.cache.store("kb", { query: "Who wrote Dune?", response: "Frank Herbert" });
    const hit = await mem.shared.cache.lookup("kb", { query: "Who wrote Dune?" });
    assert.equal(hit.hit, true);
    assert.equal(hit.entry?.response, "Frank Herbert");
    assert.equal((await mem.shared.cache.stats("kb")).hits, 1);
    assert.ok((await mem.shared.cache.search("kb", { query: "Dune" })).items.length >= 1);
    await mem.shared.cache.invalidate("kb", { query: "Who wrote Dune?" });
    await mem.shared.cache.clear("kb");
    await mem.shared.documents.put("kb", "readme", { content: "Set REDIS_URL to connect to Redis." });
    assert.equal((await mem.shared.documents.get("kb", "readme")).text, "Set REDIS_URL to connect to Redis.");
    assert.deepEqual((await mem.shared.documents.keys("kb")).items, ["readme"]);
    const docs = await mem.shared.documents.search("kb", { query: "redis" });
    assert.equal(docs.items[0]?.key, "readme");
    await mem.shared.documents.delete("kb", "readme");
    await assert.rejects(mem.shared.documents.get("kb", "readme"), EntryNotFound);
  });
});

describe("context, tools, dream, forget, info", () => {
  test("context builds this turn's messages with recalled memories", async () => {
    await mem.memories.save({ scope: "bob", content: "Bob is allergic to peanuts" });
    const built = await mem.context.build({ session_id: "t1", scope: "bob", message: "what is bob allergic to" });
    assert.ok(JSON.stringify(built.messages).includes("peanuts"));
  });

  test("tools: the schemas, and a call as a model emits it", async () => {
    const names = (await mem.tools.list()).tools.map((t) => (t as { function: { name: string } }).function.name);
    assert.ok(names.includes("save_memory") && names.includes("search_memory"));
    await mem.tools.call("save_memory", { content: "Carol likes jazz" }, { scope: "carol" });
    const found = await mem.tools.call("search_memory", '{"query": "jazz"}', { scope: "carol" });
    assert.ok(found.result.includes("Carol likes jazz"));
  });

  test("dream: a dedupe pass, its record, undo, feedback", async () => {
    await mem.memories.save({ scope: "dup", id: "d1", content: "Dan likes the colour blue a lot" });
    await mem.memories.save({ scope: "dup", id: "d2", content: "dan likes the colour blue a lot!" });
    const run = await mem.dream.run({ scope: "dup", passes: ["dedupe"] });
    assert.equal(run.items.length, 1);
    const history = await mem.dream.history({ scope: "dup" });
    const record = history.items[0];
    if (record === undefined) throw new Error("no dream record");
    assert.equal((await mem.dream.show(record.id, { scope: "dup" })).id, record.id);
    const undone = await mem.dream.undo(record.id, { scope: "dup" });
    assert.equal(undone.record_id, record.id);
    const feedback = await mem.dream.feedback({ scope: "dup", kind: "correction", text: "say Dan, not dan" });
    assert.equal(feedback.kind, "correction");
  });

  test("forget a subject: the report says nothing is left", async () => {
    await mem.memories.save({ scope: "erin", content: "Erin's phone is 555-0100", subject: "erin" });
    const report = await mem.forget.run({ subject: "erin" });
    assert.equal(report.complete, true);
    assert.equal(report.remaining, 0);
    assert.deepEqual((await mem.memories.search({ scope: "erin", query: "phone" })).items, []);
  });

  test("loop: remember a user's messages, recall them with their sources, forget the user", async () => {
    const done = await mem.loop.remember({ user: "finn", messages: [{ role: "user", content: "I keep bees in Porto" }] });
    assert.equal(done.conversation, "user-finn");
    assert.equal(done.messages.length, 1);
    const [first] = (await mem.loop.recall({ query: "bees", user: "finn" })).items;
    assert.ok(first !== undefined && done.messages[0] !== undefined);
    assert.equal(first.kind, "turn");
    assert.deepEqual(first.message_ids, [done.messages[0].message_id]);
    assert.deepEqual(first.conversations, ["user-finn"]);
    assert.deepEqual((await mem.loop.recall({ query: "bees", user: "gil" })).items, []);
    assert.equal((await mem.forget.run({ subject: "finn" })).remaining, 0);
    assert.deepEqual((await mem.loop.recall({ query: "bees", user: "finn" })).items, []);
  });

  test("turns: a recorded turn is in its conversation already, so the migration copies nothing, twice", async () => {
    await mem.context.build({ session_id: "tm1", message: "I water the ferns on Sundays", record_turn: true, user: "hana" });
    assert.deepEqual(await mem.turns.migrate(), { copied: 0 });
    assert.deepEqual(await mem.turns.migrate(), { copied: 0 });
    const [turn] = (await mem.conversations.messages("tm1")).items;
    assert.equal(turn?.content, "I water the ferns on Sundays");
  });

  test("info names the engine", async () => {
    const info = await mem.info.get();
    assert.equal(info.engine, "sqlite");
    assert.equal(info.retrieval.mode, "bm25");
  });
});
