/**
 * Memory tools for the Vercel AI SDK (`ai`): `memstackTools(client)` gives a model tools to save,
 * search and forget the long-term memories of one scope, for `generateText`/`streamText`:
 *
 * ```ts
 * import { generateText, stepCountIs } from "ai";
 * import { Memstack } from "@memstack/client";
 * import { memstackTools } from "@memstack/client/ai";
 *
 * const mem = new Memstack({ baseUrl: "http://127.0.0.1:8765" });
 * const { text } = await generateText({
 *   model, prompt: "I am vegetarian", stopWhen: stepCountIs(3),
 *   tools: memstackTools(mem, { scope: "alice", subject: "alice" }),
 * });
 * ```
 *
 * What the tools save is labelled with `subject` (the end user), so `mem.forget({ subject })`
 * removes it. Their input schemas are JSON Schemas (no schema library needed).
 */

import { jsonSchema, tool } from "ai";
import type { Memstack } from "../client.js";

/** Which memories the tools work on. */
export interface MemstackToolsOptions {
  /** The long-term scope (default `"default"`). */
  scope?: string;
  /** The end user what the tools save is about. */
  subject?: string;
  /** Memories a search returns at most (default 5). */
  limit?: number;
}

/** A memory as the tools hand it to a model. */
export interface ToolMemory {
  id: string;
  content: string;
  category?: string | null;
  score?: number;
}

/** `saveMemory`, `searchMemories` and `forgetMemory` tools over one scope of `client`'s memories. */
export function memstackTools(client: Memstack, options: MemstackToolsOptions = {}) {
  const scope = options.scope ?? "default";
  const limit = options.limit ?? 5;
  const subject = options.subject;
  return {
    saveMemory: tool({
      description: "Remember a durable fact about the user or the task for later conversations.",
      inputSchema: jsonSchema<{ content: string; category?: string; tags?: string[] }>({
        type: "object",
        properties: {
          content: { type: "string", minLength: 1, description: "The fact, as one self-contained sentence." },
          category: { type: "string", description: "An optional path such as preferences/food." },
          tags: { type: "array", items: { type: "string" }, description: "Optional labels." },
        },
        required: ["content"],
        additionalProperties: false,
      }),
      execute: async ({ content, category, tags }): Promise<ToolMemory> => {
        const saved = await client.memories.save({ scope, content, category, tags, subject });
        return { id: saved.id, content: saved.content, category: saved.category };
      },
    }),
    searchMemories: tool({
      description: "Search what was remembered earlier; returns the most relevant memories.",
      inputSchema: jsonSchema<{ query: string }>({
        type: "object",
        properties: { query: { type: "string", description: "Words describing what to look for." } },
        required: ["query"],
        additionalProperties: false,
      }),
      execute: async ({ query }): Promise<ToolMemory[]> => {
        const found = await client.memories.search({ scope, query, limit });
        return found.items.map((hit) => ({
          id: hit.entry.id,
          content: hit.entry.content,
          category: hit.entry.category,
          score: hit.score,
        }));
      },
    }),
    forgetMemory: tool({
      description: "Forget one memory by the id a search returned (when the user asks, or it is wrong).",
      inputSchema: jsonSchema<{ id: string }>({
        type: "object",
        properties: { id: { type: "string", description: "The memory's id." } },
        required: ["id"],
        additionalProperties: false,
      }),
      execute: async ({ id }): Promise<{ id: string; deleted: boolean }> => {
        return await client.memories.delete(id, { scope });
      },
    }),
  };
}
