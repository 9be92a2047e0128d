// Typed errors from problem bodies: the class the server names, in the tree of the Python exceptions.

import { strict as assert } from "node:assert";
import { rmSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import {
  AlreadyExists,
  Conflict,
  ERROR_CLASSES,
  ERROR_TREE,
  EntryNotFound,
  InvalidInput,
  InvalidSessionId,
  LimitReached,
  Memstack,
  MemstackError,
  NamespaceFull,
  NotANumber,
  NotFound,
  RequestValidationError,
  SessionExists,
  SessionNotFound,
  Unauthorized,
  WaitTimeout,
} from "../src/index.js";
import { memstackCli, python, serve, tempDatabase, type Served, servedClient } from "./_server.js";

let server: Served;
let mem: Memstack;

servedClient((s, m) => {
  server = s;
  mem = m;
});

/** The error a call rejects with (fails when it resolves). */
async function failure(call: PromiseLike<unknown>): Promise<MemstackError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof MemstackError, `not a MemstackError: ${String(error)}`);
    return error;
  }
  assert.fail("the call did not fail");
}

describe("each status gives the class the server names", () => {
  test("404: SessionNotFound and EntryNotFound are NotFound; an unknown route is NotFound", async () => {
    const missing = await failure(mem.sessions.show("nobody"));
    assert.ok(missing instanceof SessionNotFound && missing instanceof NotFound);
    assert.equal(missing.name, "SessionNotFound");
    assert.equal(missing.status, 404);
    assert.equal(missing.operation, "sessions_show");
    assert.match(missing.message, /nobody/);
    assert.equal(missing.problem?.error, "SessionNotFound");
    const key = await failure(mem.working.get("nothing", { namespace: "session/x" }));
    assert.ok(key instanceof EntryNotFound && key instanceof NotFound && !(key instanceof SessionNotFound));
    const route = await failure(mem.transport.call("sessions_show", { session_id: "a/b" }));
    assert.ok(route instanceof NotFound);
  });

  test("409: SessionExists, Conflict, NotANumber; the failed call changed nothing", async () => {
    await mem.sessions.create({ session_id: "s409" });
    await mem.sessions.put("s409", "label", { value: "text" });
    const exists = await failure(mem.sessions.create({ session_id: "s409" }));
    assert.ok(exists instanceof SessionExists && exists instanceof AlreadyExists);
    assert.equal(exists.status, 409);
    await mem.shared.put("b409", "k", { value: 1 });
    const lost = await failure(mem.shared.put("b409", "k", { value: 2, version: 7 }));
    assert.ok(lost instanceof Conflict);
    assert.equal((await mem.shared.get("b409", "k")).value, 1);
    const text = await failure(mem.sessions.increment("s409", "label"));
    assert.ok(text instanceof NotANumber);
    assert.equal((await mem.sessions.get("s409", "label")).value, "text");
  });

  test("422: a request off its schema names the field; nothing is written", async () => {
    const low = await failure(mem.sessions.list({ limit: 0 }));
    assert.ok(low instanceof RequestValidationError && low instanceof InvalidInput);
    assert.equal(low.status, 422);
    assert.match(low.message, /limit/);
    const unknown = await failure(
      mem.transport.call("sessions_put", { session_id: "s422", key: "k", value: 1, create: true, bogus: 1 }),
    );
    assert.ok(unknown instanceof RequestValidationError);
    assert.match(unknown.message, /bogus/);
    await assert.rejects(mem.sessions.show("s422"), SessionNotFound);
  });

  test("400: a value breaking a rule is InvalidInput of its kind", async () => {
    const bad = await failure(mem.sessions.create({ session_id: "not an id!" }));
    assert.ok(bad instanceof InvalidSessionId && bad instanceof InvalidInput);
    assert.equal(bad.status, 400);
  });

  test("429: a full working-memory namespace is NamespaceFull, a LimitReached", async () => {
    const namespace = "session/full";
    let error: MemstackError | undefined;
    for (let n = 0; n < 200 && error === undefined; n++) {
      try {
        await mem.working.set(`k${n}`, { namespace, value: n });
      } catch (caught) {
        error = caught as MemstackError;
      }
    }
    assert.ok(error instanceof NamespaceFull && error instanceof LimitReached, String(error));
    assert.equal(error.status, 429);
    const listed = await mem.working.list({ namespace });
    assert.equal(listed.items.length, 50);
  });

  test("408: a long poll that sees no write is WaitTimeout", async () => {
    const timeout = await failure(mem.shared.get("b408", "never", { wait: 0.2 }));
    assert.ok(timeout instanceof WaitTimeout);
    assert.equal(timeout.status, 408);
  });
});

describe("401 and tenants in keys mode", () => {
  let keyed: Served;
  let token: string;
  const database = tempDatabase();

  before(async () => {
    token = JSON.parse(memstackCli(database.url, "--json", "keys", "create", "--tenant", "acme")).token;
    keyed = await serve(["--auth", "keys"], database);
  });
  after(async () => {
    await keyed.stop();
    rmSync(database.dir, { recursive: true, force: true });
  });

  test("no key and a wrong key are Unauthorized; the key works for its tenant only", async () => {
    const anonymous = new Memstack({ baseUrl: keyed.baseUrl });
    const none = await failure(anonymous.sessions.list());
    assert.ok(none instanceof Unauthorized && !(none instanceof NotFound));
    assert.equal(none.status, 401);
    const wrong = new Memstack({ baseUrl: keyed.baseUrl, apiKey: "ms_wrong" });
    assert.ok((await failure(wrong.sessions.list())) instanceof Unauthorized);
    const acme = new Memstack({ baseUrl: keyed.baseUrl, apiKey: token });
    await acme.sessions.create({ session_id: "a1" });
    assert.deepEqual((await acme.sessions.list()).items, ["a1"]);
    const named = new Memstack({ baseUrl: keyed.baseUrl, apiKey: token, tenant: "acme" });
    assert.deepEqual((await named.sessions.list()).items, ["a1"]);
    const other = new Memstack({ baseUrl: keyed.baseUrl, apiKey: token, tenant: "globex" });
    assert.ok((await failure(other.sessions.list())) instanceof NotFound);
  });
});

test("the error classes draw the Python exception tree", () => {
  const pairs: Array<[string, string, boolean]> = python(`
import json, memstack.foundation.errors as E
names = [n for n in E.__all__ if isinstance(getattr(E, n), type) and issubclass(getattr(E, n), E.MemstackError)]
print(json.dumps([[a, b, issubclass(getattr(E, a), getattr(E, b))] for a in names for b in names]))
`);
  assert.ok(pairs.length > 500);
  for (const [a, b, subclass] of pairs) {
    const A = ERROR_CLASSES[a];
    const B = ERROR_CLASSES[b];
    assert.ok(A && B, `${a} or ${b} has no class`);
    assert.equal(new A("x") instanceof B, subclass, `${a} instanceof ${b}`);
  }
  for (const [name, cls] of Object.entries(ERROR_CLASSES)) {
    assert.equal(new cls("x").name, name);
    assert.ok(name in ERROR_TREE);
  }
});
