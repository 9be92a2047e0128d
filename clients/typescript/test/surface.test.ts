// The client covers the registry: every operation the server's document gives a client method is
// reached by that method of a Memstack client, which calls that very operation.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { Memstack, OPERATIONS, type OperationId } from "../src/index.js";

test("every operation of the registry has its client method", () => {
  const mem = new Memstack({ baseUrl: "http://127.0.0.1:9" });
  const named = Object.entries(OPERATIONS).filter(([, spec]) => spec.client !== null);
  assert.ok(named.length >= 60, `only ${named.length} operations name a client method`);
  const reached = new Set<string>();
  for (const [id, spec] of named) {
    let target: unknown = mem;
    for (const part of (spec.client as string).split(".")) target = (target as Record<string, unknown>)[part];
    assert.equal(typeof target, "function", `${spec.client} (${id}) is not a method`);
    const called = (target as { operation?: OperationId }).operation;
    // An operation with two routes (memories.save: POST and PUT) is called through one method.
    assert.equal(called, id.replace(/_\d+$/, ""), `${spec.client} calls ${called}, not ${id}`);
    reached.add(spec.client as string);
  }
  for (const id of ["tools_list", "tools_call", "info"]) {
    assert.ok(id in OPERATIONS, `the document has no ${id} operation`);
  }
  assert.ok(reached.has("sessions.get") && reached.has("store.put") && reached.has("shared.watch"));
});
