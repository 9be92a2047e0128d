// memstackTools inside the Vercel AI SDK's own generateText and streamText, their model the SDK's
// scripted MockLanguageModelV2, against a real `memstack serve`; the CLI shows what the tools saved.

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";
import { generateText, stepCountIs, streamText } from "ai";
import { MockLanguageModelV2, simulateReadableStream } from "ai/test";
import { Memstack } from "../src/index.js";
import { memstackTools } from "../src/ai/index.js";
import { memstackCli, type Served, servedClient } from "./_server.js";

let server: Served;
let mem: Memstack;

servedClient((s, m) => {
  server = s;
  mem = m;
});

const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
type Generate = Extract<NonNullable<ConstructorParameters<typeof MockLanguageModelV2>[0]>["doGenerate"], Function>;
type Generated = Awaited<ReturnType<Generate>>;
type Stream = Extract<NonNullable<ConstructorParameters<typeof MockLanguageModelV2>[0]>["doStream"], Function>;
type Chunk = Awaited<ReturnType<Stream>>["stream"] extends ReadableStream<infer C> ? C : never;

/** A model that calls one tool, then answers `text`; it records the prompts it was given. */
function scripted(toolName: string, input: unknown, text: string) {
  const prompts: unknown[] = [];
  const steps: Generated[] = [
    {
      content: [{ type: "tool-call", toolCallId: "c1", toolName, input: JSON.stringify(input) }],
      finishReason: "tool-calls",
      usage,
      warnings: [],
    },
    { content: [{ type: "text", text }], finishReason: "stop", usage, warnings: [] },
  ];
  const model = new MockLanguageModelV2({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const step = steps[prompts.length - 1];
      if (step === undefined) throw new Error("the script is exhausted");
      return step;
    },
  });
  return { model, prompts };
}

describe("memstackTools", () => {
  test("a model saves, searches and forgets through generateText; the CLI shows the memory", async () => {
    const tools = memstackTools(mem, { scope: "ann", subject: "ann" });
    assert.deepEqual(Object.keys(tools).sort(), ["forgetMemory", "saveMemory", "searchMemories"]);
    assert.deepEqual((tools.saveMemory.inputSchema as { jsonSchema: { required: string[] } }).jsonSchema.required, ["content"]);

    const save = scripted("saveMemory", { content: "Ann's dog is called Rex", tags: ["pet"] }, "Noted.");
    const saved = await generateText({ model: save.model, prompt: "my dog is Rex", tools, stopWhen: stepCountIs(3) });
    assert.equal(saved.text, "Noted.");
    const result = saved.steps[0]?.toolResults[0]?.output as { id: string; content: string };
    assert.equal(result.content, "Ann's dog is called Rex");

    const shown = JSON.parse(memstackCli(server.url, "--json", "memories", "search", "dog", "--scope", "ann"));
    assert.deepEqual(shown.items.map((h: { entry: { content: string } }) => h.entry.content), ["Ann's dog is called Rex"]);

    const search = scripted("searchMemories", { query: "dog name" }, "Your dog is Rex.");
    const answered = await generateText({ model: search.model, prompt: "what is my dog called?", tools, stopWhen: stepCountIs(3) });
    assert.equal(answered.text, "Your dog is Rex.");
    assert.match(JSON.stringify(search.prompts[1]), /Ann's dog is called Rex/, "the hit went back to the model");

    const forget = scripted("forgetMemory", { id: result.id }, "Forgotten.");
    await generateText({ model: forget.model, prompt: "forget my dog", tools, stopWhen: stepCountIs(3) });
    assert.deepEqual((await mem.memories.search({ scope: "ann", query: "dog" })).items, []);
  });

  test("streamText runs the tools too, and forget by subject removes what they saved", async () => {
    const tools = memstackTools(mem, { scope: "bea", subject: "bea" });
    let call = 0;
    const model = new MockLanguageModelV2({
      doStream: async () => {
        call += 1;
        const chunks: Chunk[] =
          call === 1
            ? [
                { type: "tool-call" as const, toolCallId: "s1", toolName: "saveMemory", input: JSON.stringify({ content: "Bea lives in Lyon" }) },
                { type: "finish" as const, finishReason: "tool-calls" as const, usage },
              ]
            : [
                { type: "text-start" as const, id: "t" },
                { type: "text-delta" as const, id: "t", delta: "Saved." },
                { type: "text-end" as const, id: "t" },
                { type: "finish" as const, finishReason: "stop" as const, usage },
              ];
        return { stream: simulateReadableStream({ chunks }) };
      },
    });
    const streamed = streamText({ model, prompt: "I live in Lyon", tools, stopWhen: stepCountIs(3) });
    assert.equal(await streamed.text, "Saved.");
    assert.equal((await mem.memories.search({ scope: "bea", query: "Lyon" })).items.length, 1);
    const report = await mem.forget.run({ subject: "bea" });
    assert.equal(report.remaining, 0);
    assert.deepEqual((await mem.memories.search({ scope: "bea", query: "Lyon" })).items, []);
  });
});
