// MemstackSession inside the OpenAI Agents SDK's own run(), its model a scripted one, against a real
// `memstack serve`; Python's MemstackSession on the same file reads the same items.

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";
import { Agent, type AgentInputItem, type Model, run, setTracingDisabled, Usage } from "@openai/agents-core";
import { Memstack } from "../src/index.js";
import { MemstackSession } from "../src/openai-agents/index.js";
import { python, type Served, servedClient } from "./_server.js";

setTracingDisabled(true);
let server: Served;
let mem: Memstack;

servedClient((s, m) => {
  server = s;
  mem = m;
});

const ITEMS: AgentInputItem[] = [
  { role: "user", content: "Mon chien s'appelle Rex 🐕" },
  { role: "assistant", status: "completed", content: [{ type: "output_text", text: "Noted." }] },
  { type: "function_call", callId: "c1", name: "save", arguments: "{}" },
];

function scripted(...answers: string[]): Model {
  return {
    async getResponse() {
      const text = answers.shift();
      if (text === undefined) throw new Error("the script is exhausted");
      return {
        usage: new Usage(),
        output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] }],
      };
    },
    getStreamedResponse() {
      throw new Error("not streamed here");
    },
  };
}

describe("MemstackSession", () => {
  test("items round-trip, pop, limits and clear", async () => {
    const session = new MemstackSession(mem, "ts-chat");
    assert.deepEqual(await session.getItems(), []);
    assert.equal(await session.popItem(), undefined);
    await session.addItems(ITEMS);
    assert.deepEqual(await session.getItems(), ITEMS);
    assert.deepEqual(await session.getItems(2), ITEMS.slice(1));
    assert.deepEqual(await session.popItem(), ITEMS[2]);
    assert.deepEqual(await session.getItems(), ITEMS.slice(0, 2));
    await session.addItems([{ role: "user", content: "again" }]);
    assert.deepEqual(await session.getItems(1), [{ role: "user", content: "again" }]);
    await session.clearSession();
    assert.deepEqual(await session.getItems(), []);
  });

  test("an agent run keeps its history; Python reads the same session; forget by subject", async () => {
    const session = new MemstackSession(mem, "ts-run", { subject: "ann" });
    const agent = new Agent({ name: "helper", model: scripted("Hello Ann.", "Still here.") });
    assert.equal((await run(agent, "hi", { session })).finalOutput, "Hello Ann.");
    assert.equal((await run(agent, "still there?", { session })).finalOutput, "Still here.");
    const items = await session.getItems();
    assert.equal(items.length, 4);
    const fromPython = python(
      `
import json
import memstack
from memstack.doors.integrations.openai_agents import MemstackSession
mem = memstack.open(${JSON.stringify(server.url)}, tenant="default")
session = MemstackSession("ts-run", mem)
popped = session.pop()
print(json.dumps({"items": session.items(), "popped": popped}))
mem.close()
`,
    );
    assert.deepEqual(fromPython.items, items.slice(0, 3), "the same items, and Python's pop");
    assert.deepEqual(fromPython.popped, items[3]);
    assert.deepEqual(await session.getItems(), items.slice(0, 3), "and JavaScript sees Python's pop");
    await mem.forget.run({ subject: "ann" });
    assert.deepEqual(await session.getItems(), []);
  });
});
