// The LangGraph.js store over /v1/store: LangGraph's store behaviour, and one store shared with a
// Python graph (Python's MemstackStore on the same SQLite file reads what JavaScript wrote, and back).

import { strict as assert } from "node:assert";
import { after, before, describe, test } from "node:test";
import { InvalidNamespaceError } from "@langchain/langgraph-checkpoint";
import { MemstackStore } from "../src/langgraph/index.js";
import { python, serve, type Served } from "./_server.js";

let server: Served;
let store: MemstackStore;

before(async () => {
  server = await serve();
  store = new MemstackStore({ baseUrl: server.baseUrl });
});
after(() => server.stop());

/** Run `body` in Python with `store`, a MemstackStore on the server's file and tenant (and `clock`). */
function inPython(body: string, input: unknown = null, clockOffset = 0): any {
  return python(
    `
import json, sys, time
import memstack
from memstack.foundation.clock import ManualClock
from memstack.doors.integrations.langgraph import MemstackStore
data = json.loads(sys.stdin.read())
mem = memstack.open(${JSON.stringify(server.url)}, tenant="default", clock=ManualClock(time.time() + ${clockOffset}))
store = MemstackStore(mem)
${body}
mem.close()
`,
    input,
  );
}

describe("items", () => {
  test("put, get, update keeps created_at, delete; a missing item is null", async () => {
    await store.put(["docs", "alice"], "report", { title: "Q3", pages: 12 });
    const first = await store.get(["docs", "alice"], "report");
    assert.ok(first);
    assert.deepEqual(first.value, { title: "Q3", pages: 12 });
    assert.deepEqual(first.namespace, ["docs", "alice"]);
    assert.equal(first.key, "report");
    assert.ok(first.createdAt instanceof Date && first.updatedAt instanceof Date);
    await store.put(["docs", "alice"], "report", { title: "Q4", pages: 20 });
    const second = await store.get(["docs", "alice"], "report");
    assert.deepEqual(second?.value, { title: "Q4", pages: 20 });
    assert.equal(second?.createdAt.getTime(), first.createdAt.getTime());
    assert.ok((second?.updatedAt.getTime() ?? 0) >= first.updatedAt.getTime());
    await store.delete(["docs", "alice"], "report");
    assert.equal(await store.get(["docs", "alice"], "report"), null);
    assert.equal(await store.get(["nowhere"], "nothing"), null);
    await store.delete(["nowhere"], "nothing"); // deleting what is not there is no error
  });

  test("nested and unicode values round-trip exactly", async () => {
    const value = { text: "naïve café ☕", list: [1, 2.5, null, true, "x"], nested: { deep: { deeper: ["a"] } } };
    await store.put(["values"], "mixed", value);
    assert.deepEqual((await store.get(["values"], "mixed"))?.value, value);
  });

  test("LangGraph's namespace rules: put refuses them, batch may write under the reserved root", async () => {
    for (const bad of [[], ["a.b"], ["ok", ""], ["langgraph", "x"]]) {
      await assert.rejects(store.put(bad, "k", { v: 1 }), InvalidNamespaceError, JSON.stringify(bad));
    }
    await store.put(["app", "langgraph", "x"], "k", { v: 1 });
    assert.deepEqual((await store.get(["app", "langgraph", "x"], "k"))?.value, { v: 1 });
    await store.batch([{ namespace: ["langgraph", "x"], key: "k", value: { v: 2 } }]);
    assert.deepEqual((await store.get(["langgraph", "x"], "k"))?.value, { v: 2 });
  });

  test("a batch runs its operations in order", async () => {
    const [put, got, found, gone, none] = await store.batch([
      { namespace: ["batch"], key: "a", value: { n: 1 } },
      { namespace: ["batch"], key: "a" },
      { namespacePrefix: ["batch"], limit: 10, offset: 0 },
      { namespace: ["batch"], key: "a", value: null },
      { namespace: ["batch"], key: "a" },
    ] as const);
    assert.equal(put, null); // as LangGraph.js's InMemoryStore answers a put
    assert.deepEqual(got?.value, { n: 1 });
    assert.deepEqual(
      found.map((i) => i.key),
      ["a"],
    );
    assert.equal(gone, null);
    assert.equal(none, null);
  });
});

describe("search", () => {
  before(async () => {
    const items: Array<[string[], string, Record<string, unknown>]> = [
      [["shop", "fruit"], "apple", { name: "apple", colour: "red", price: 1.2, tags: ["sweet"], note: "crisp red apple" }],
      [["shop", "fruit"], "lemon", { name: "lemon", colour: "yellow", price: 0.5, tags: ["sour"], note: "sour yellow citrus" }],
      [["shop", "fruit"], "cherry", { name: "cherry", colour: "red", price: 4, tags: ["sweet"], note: "small red stone fruit" }],
      [["shop", "veg"], "pepper", { name: "pepper", colour: "red", price: 2, tags: ["hot"], note: "red chili pepper" }],
      [["other"], "apple", { name: "apple", colour: "green", price: 1, tags: [], note: "a green apple" }],
    ];
    for (const [namespace, key, value] of items) await store.put(namespace, key, value);
  });

  test("a prefix limits the namespaces searched", async () => {
    const fruit = await store.search(["shop", "fruit"]);
    assert.deepEqual(fruit.map((i) => i.key).sort(), ["apple", "cherry", "lemon"]);
    assert.equal((await store.search(["shop"])).length, 4);
    assert.ok((await store.search([], { limit: 100 })).length >= 5);
  });

  test("filters: equality, comparisons, membership", async () => {
    const keys = async (filter: Record<string, unknown>) =>
      (await store.search(["shop"], { filter })).map((i) => i.key).sort();
    assert.deepEqual(await keys({ colour: "red" }), ["apple", "cherry", "pepper"]);
    assert.deepEqual(await keys({ colour: "red", price: { $gt: 1.5 } }), ["cherry", "pepper"]);
    assert.deepEqual(await keys({ price: { $lte: 1.2 } }), ["apple", "lemon"]);
    assert.deepEqual(await keys({ colour: { $ne: "red" } }), ["lemon"]);
    assert.deepEqual(await keys({ name: { $in: ["lemon", "pepper"] } }), ["lemon", "pepper"]);
    assert.deepEqual(await keys({ name: { $nin: ["lemon", "pepper"] } }), ["apple", "cherry"]);
    assert.deepEqual(await keys({ colour: "blue" }), []);
  });

  test("a query ranks the items and gives scores", async () => {
    const found = await store.search(["shop"], { query: "sour citrus" });
    assert.equal(found[0]?.key, "lemon");
    assert.equal(typeof found[0]?.score, "number");
    const filtered = await store.search(["shop"], { query: "red", filter: { name: { $ne: "pepper" } } });
    assert.ok(filtered.every((i) => i.key !== "pepper"));
  });

  test("limit and offset page the results", async () => {
    const all = (await store.search(["shop"], { limit: 10 })).map((i) => `${i.namespace.join("/")}:${i.key}`);
    const pages = [
      ...(await store.search(["shop"], { limit: 2, offset: 0 })),
      ...(await store.search(["shop"], { limit: 2, offset: 2 })),
    ].map((i) => `${i.namespace.join("/")}:${i.key}`);
    assert.deepEqual(pages, all);
  });
});

describe("namespaces", () => {
  before(async () => {
    for (const ns of [
      ["tree", "a", "b", "c"],
      ["tree", "a", "b", "d"],
      ["tree", "a", "e", "f"],
      ["tree", "x", "y", "c"],
    ]) {
      await store.put(ns, "k", { v: 1 });
    }
  });

  test("prefix, suffix, wildcards, depth, limit and offset", async () => {
    const list = (options: Parameters<MemstackStore["listNamespaces"]>[0]) => store.listNamespaces(options);
    assert.deepEqual(await list({ prefix: ["tree", "a"] }), [
      ["tree", "a", "b", "c"],
      ["tree", "a", "b", "d"],
      ["tree", "a", "e", "f"],
    ]);
    assert.deepEqual(await list({ prefix: ["tree"], suffix: ["c"] }), [
      ["tree", "a", "b", "c"],
      ["tree", "x", "y", "c"],
    ]);
    assert.deepEqual(await list({ prefix: ["tree", "*", "b"] }), [
      ["tree", "a", "b", "c"],
      ["tree", "a", "b", "d"],
    ]);
    assert.deepEqual(await list({ prefix: ["tree"], suffix: ["*", "f"] }), [["tree", "a", "e", "f"]]);
    assert.deepEqual(await list({ prefix: ["tree"], maxDepth: 2 }), [
      ["tree", "a"],
      ["tree", "x"],
    ]);
    assert.deepEqual(await list({ prefix: ["tree"], limit: 2, offset: 1 }), [
      ["tree", "a", "b", "d"],
      ["tree", "a", "e", "f"],
    ]);
    assert.deepEqual(await list({ prefix: ["no", "such"] }), []);
  });

  test("a namespace is listed while it holds items", async () => {
    await store.put(["brief"], "only", { v: 1 });
    assert.deepEqual(await store.listNamespaces({ prefix: ["brief"] }), [["brief"]]);
    await store.delete(["brief"], "only");
    assert.deepEqual(await store.listNamespaces({ prefix: ["brief"] }), []);
  });
});

describe("one store for JavaScript and Python graphs", () => {
  test("Python reads what JavaScript wrote, and JavaScript reads what Python wrote", async () => {
    await store.put(["shared", "alice"], "prefs", { theme: "dark", language: "fr" });
    const seen = inPython(`
item = store.get(("shared", "alice"), "prefs")
store.put(("shared", "alice"), "seen", {"by": "python", "theme": item.value["theme"]})
print(json.dumps({"value": item.value, "namespace": list(item.namespace), "created": item.created_at.isoformat()}))
`);
    assert.deepEqual(seen.value, { theme: "dark", language: "fr" });
    assert.deepEqual(seen.namespace, ["shared", "alice"]);
    const back = await store.get(["shared", "alice"], "seen");
    assert.deepEqual(back?.value, { by: "python", theme: "dark" });
    const found = await store.search(["shared"], { filter: { by: "python" } });
    assert.deepEqual(
      found.map((i) => i.key),
      ["seen"],
    );
    assert.deepEqual(await store.listNamespaces({ prefix: ["shared"] }), [["shared", "alice"]]);
  });

  test("a TTL set from JavaScript expires the item for Python's clock", async () => {
    await store.put(["ttl"], "short", { v: 1 }, undefined, { ttl: 5 });
    await store.put(["ttl"], "kept", { v: 2 });
    // Python reads without refreshing: its clock is ahead of the server's.
    const read = `print(json.dumps([store.get(("ttl",), k, refresh_ttl=False) is not None for k in ("short", "kept")]))`;
    assert.deepEqual(inPython(read, null, 60), [true, true]); // 1 minute on: still there
    assert.deepEqual(inPython(read, null, 6 * 60), [false, true]); // 6 minutes on: expired
    const defaulted = new MemstackStore({ client: store.client, ttl: { defaultTtl: 2 } });
    await defaulted.put(["ttl"], "default", { v: 3 });
    const late = `print(json.dumps(store.get(("ttl",), "default", refresh_ttl=False) is not None))`;
    assert.equal(inPython(late, null, 60), true);
    assert.equal(inPython(late, null, 3 * 60), false);
  });
});
