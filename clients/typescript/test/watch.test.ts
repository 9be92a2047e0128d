// Watching a shared board over server-sent events: the snapshot, each write, abort, reconnect.

import { strict as assert } from "node:assert";
import { rmSync } from "node:fs";
import { test } from "node:test";
import { InvalidKey, Memstack, type BoardEvent } from "../src/index.js";
import { freePort, serve, tempDatabase, type Served, servedClient } from "./_server.js";

let server: Served;
let mem: Memstack;

servedClient((s, m) => {
  server = s;
  mem = m;
});

/** Collect events of `board` until `enough` says so; the watch is then aborted. */
async function collect(
  client: Memstack,
  board: string,
  enough: (events: BoardEvent[]) => boolean,
  whileWatching: () => Promise<void>,
): Promise<BoardEvent[]> {
  const controller = new AbortController();
  const events: BoardEvent[] = [];
  let connected!: () => void;
  const ready = new Promise<void>((resolve) => (connected = resolve));
  const reading = (async () => {
    for await (const event of client.shared.watch(board, { signal: controller.signal })) {
      events.push(event);
      if (events.length === 1) connected();
      if (enough(events)) controller.abort();
    }
  })();
  // Handled at once: the abort may land while the writes are still being awaited.
  const outcome = reading.then(
    () => null,
    (error: unknown) => error,
  );
  await ready;
  await whileWatching();
  assert.equal((await outcome as Error | null)?.name, "AbortError");
  return events;
}

test("the snapshot, then one change per write, in order", async () => {
  await mem.shared.put("team", "plan", { value: ["research"] });
  const events = await collect(
    mem,
    "team",
    (events) => events.length === 4,
    async () => {
      await mem.shared.put("team", "plan", { value: ["research", "write"] });
      await mem.shared.put("team", "owner", { value: "ana" });
      await mem.shared.delete("team", "owner"); // a delete does not notify (as the library's boards)
      await mem.shared.put("team", "owner", { value: "bo" });
    },
  );
  const [snapshot, ...changes] = events;
  assert.equal(snapshot?.event, "snapshot");
  // The snapshot holds the board's reserved keys too (data, results, messages).
  assert.deepEqual(snapshot?.event === "snapshot" && snapshot.snapshot.plan, ["research"]);
  assert.deepEqual(
    changes.map((c) => (c.event === "change" ? [c.key, c.value ?? null] : null)),
    [
      ["plan", ["research", "write"]],
      ["owner", "ana"],
      ["owner", "bo"],
    ],
  );
  for (const change of changes) assert.ok(change.event === "change" && change.timestamp.endsWith("Z"));
});

test("a bad board name is refused before any event, and not retried", async () => {
  const events = mem.shared.watch("no spaces allowed");
  await assert.rejects(events.next(), InvalidKey);
});

test("the watch connects again when its server comes back, with a new snapshot", async () => {
  const database = tempDatabase();
  const port = await freePort();
  let first: Served | null = await serve([], database, port);
  const client = new Memstack({ baseUrl: first.baseUrl });
  await client.shared.put("ops", "state", { value: "before" });
  try {
    const events = await collect(
      client,
      "ops",
      (events) => {
        const again = events.findIndex((e, n) => n > 0 && e.event === "snapshot");
        return (
          again > 0 &&
          events
            .slice(again)
            .some((e) => (e.event === "snapshot" ? e.snapshot.state : e.value) === "after")
        );
      },
      async () => {
        await first?.stop();
        first = await serve([], database, port);
        await client.shared.put("ops", "state", { value: "after" });
      },
    );
    assert.equal(events[0]?.event, "snapshot");
    assert.ok(events.filter((e) => e.event === "snapshot").length >= 2);
  } finally {
    await first?.stop();
    rmSync(database.dir, { recursive: true, force: true });
  }
});
