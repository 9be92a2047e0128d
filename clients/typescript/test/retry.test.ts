// One retry after a 503 with Retry-After: for reads, and for writes carrying their idempotency key.

import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { EngineUnavailable, Memstack, MemstackError, retryAfterSeconds, type RetryEvent } from "../src/index.js";
import { relay, type Relay } from "./_relay.js";
import { PYTHON, env, serve, type Served } from "./_server.js";

let server: Served;
let faults: Relay;
let retries: RetryEvent[];
let mem: Memstack;

before(async () => {
  server = await serve();
  faults = await relay(server.baseUrl);
  mem = new Memstack({ baseUrl: faults.baseUrl, onRetry: (event) => void retries.push(event) });
});
after(async () => {
  await faults.close();
  await server.stop();
});

/** The requests the relay saw during `run`. */
async function requestsDuring(run: () => Promise<unknown>): Promise<string[]> {
  const start = faults.seen.length;
  retries = [];
  await run();
  return faults.seen.slice(start);
}

async function rejection(call: Promise<unknown>): Promise<MemstackError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof MemstackError, String(error));
    return error;
  }
  assert.fail("the call did not fail");
}

describe("what is retried", () => {
  test("a read is sent again after a 503 with Retry-After, once", async () => {
    await mem.sessions.put("r1", "k", { value: "v", create: true });
    faults.fail({ retryAfter: 0, when: "before" });
    const seen = await requestsDuring(async () => assert.equal((await mem.sessions.get("r1", "k")).value, "v"));
    assert.deepEqual(seen, ["GET /v1/sessions/r1/keys/k", "GET /v1/sessions/r1/keys/k"]);
    assert.equal(retries.length, 1);
    assert.equal(retries[0]?.operation, "sessions_get");
    assert.ok(retries[0]?.error instanceof EngineUnavailable);
  });

  test("the wait is the one Retry-After asks for", async () => {
    faults.fail({ retryAfter: 1, when: "before" });
    const started = Date.now();
    await requestsDuring(() => mem.sessions.get("r1", "k"));
    assert.equal(retries[0]?.delay, 1);
    assert.ok(Date.now() - started >= 950, "the retry came before Retry-After");
  });

  test("a second 503 is thrown, marked retried", async () => {
    faults.fail({ retryAfter: 0, when: "before" }, { retryAfter: 0, when: "before" });
    let error: MemstackError | undefined;
    const seen = await requestsDuring(async () => {
      error = await rejection(mem.sessions.get("r1", "k"));
    });
    assert.equal(seen.length, 2);
    assert.ok(error instanceof EngineUnavailable);
    assert.equal(error.retried, true);
    assert.equal(error.status, 503);
    assert.equal(error.retryAfter, 0);
  });

  test("a write without its idempotency key is not sent again: nothing is written", async () => {
    faults.fail({ retryAfter: 0, when: "before" });
    let error: MemstackError | undefined;
    const seen = await requestsDuring(async () => {
      error = await rejection(mem.conversations.append("rc", { role: "user", content: "hello" }));
    });
    assert.equal(seen.length, 1);
    assert.ok(error instanceof EngineUnavailable && !error.retried);
    assert.deepEqual((await mem.conversations.list()).items, []);
  });

  test("a write carrying its idempotency key is sent again", async () => {
    faults.fail({ retryAfter: 0, when: "before" });
    const seen = await requestsDuring(() =>
      mem.conversations.append("rc", { role: "user", content: "hello", message_id: "m1" }),
    );
    assert.equal(seen.length, 2);
    assert.equal((await mem.conversations.messages("rc")).items.length, 1);
  });

  test("a keyed write whose answer was lost is applied once: the retry answers AlreadyExists, retried", async () => {
    faults.fail({ retryAfter: 0, when: "after" });
    let error: MemstackError | undefined;
    const seen = await requestsDuring(async () => {
      error = await rejection(mem.conversations.append("rc", { role: "user", content: "again", message_id: "m2" }));
    });
    assert.equal(seen.length, 2);
    assert.equal(error?.name, "AlreadyExists");
    assert.equal(error?.retried, true);
    const contents = (await mem.conversations.messages("rc")).items.map((m) => m.content);
    assert.deepEqual(contents, ["hello", "again"]);
  });

  test("no retry without Retry-After, beyond maxRetryDelay, or with retry: false", async () => {
    faults.fail({ retryAfter: null, when: "before" });
    assert.equal((await requestsDuring(() => rejection(mem.sessions.get("r1", "k")))).length, 1);
    const patient = new Memstack({ baseUrl: faults.baseUrl, maxRetryDelay: 5 });
    faults.fail({ retryAfter: 60, when: "before" });
    const long = await rejection(patient.sessions.get("r1", "k"));
    assert.equal(long.retryAfter, 60);
    assert.equal(long.retried, false);
    faults.fail({ retryAfter: 0, when: "before" });
    const seen = await requestsDuring(() => rejection(mem.sessions.get("r1", "k", {}, { retry: false })));
    assert.equal(seen.length, 1);
  });
});

test("a real 503: the SQLite file locked by another process, released before the retry", async () => {
  const direct = new Memstack({
    baseUrl: server.baseUrl,
    onRetry: () => {
      holder.stdin?.end("release\n");
    },
  });
  await direct.sessions.create({ session_id: "locked" });
  const path = server.url.slice("sqlite:///".length);
  const holder = spawn(
    PYTHON,
    [
      "-c",
      "import sqlite3, sys\n" +
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n" +
        "c.execute('BEGIN EXCLUSIVE')\n" +
        "print('locked', flush=True)\n" +
        "sys.stdin.readline()\n" +
        "c.execute('COMMIT')\n",
      path,
    ],
    { env: env(), stdio: ["pipe", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve) => holder.stdout?.once("data", () => resolve()));
  const put = await direct.sessions.put("locked", "k", { value: "after the lock" });
  assert.equal(put.value, "after the lock");
  assert.equal((await direct.sessions.get("locked", "k")).value, "after the lock");
  if (holder.exitCode === null) await new Promise((resolve) => holder.once("exit", resolve)); // it may be gone already
});

test("Retry-After as seconds or an HTTP date", () => {
  assert.equal(retryAfterSeconds("3"), 3);
  assert.equal(retryAfterSeconds(null), null);
  assert.equal(retryAfterSeconds("soon"), null);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(retryAfterSeconds("Thu, 01 Jan 2026 00:00:05 GMT", now), 5);
  assert.equal(retryAfterSeconds("Wed, 31 Dec 2025 23:00:00 GMT", now), 0);
});
