/**
 * An OpenAI Agents SDK (`@openai/agents`) session kept in a memstack conversation, the twin of
 * Python's `memstack.doors.integrations.openai_agents.MemstackSession` (same layout: either reads and
 * writes the other's sessions):
 *
 * ```ts
 * import { run } from "@openai/agents";
 * import { MemstackSession } from "@memstack/client/openai-agents";
 *
 * const session = new MemstackSession(mem, "chat-42", { subject: "alice" });
 * await run(agent, "hello", { session });
 * ```
 *
 * Each item is one message whose content is the item's JSON. `popItem` appends a marker whose
 * parent is the popped item's parent, so the active thread no longer holds it. Every write is named
 * after the conversation's length read just before it, so a concurrent writer is detected (the name is
 * taken) and the write is retried: nothing is lost, nothing is popped twice.
 */

import type { AgentInputItem, Session } from "@openai/agents-core";
import type { Memstack } from "../client.js";
import { AlreadyExists, NotFound } from "../errors.js";

const POPPED = "popped ";
const RETRIES = 50;
const ROLES: Record<string, string> = { user: "user", assistant: "assistant", system: "system", developer: "system" };

interface Stored {
  message_id: string;
  parent_message_id?: string | null;
  content: string;
}

function roleOf(item: AgentInputItem): string {
  const record = item as { role?: unknown; type?: unknown };
  if (typeof record.role === "string" && record.role in ROLES) return ROLES[record.role] as string;
  return typeof record.type === "string" && record.type.endsWith("_output") ? "tool" : "assistant";
}

/** Options of a {@link MemstackSession}. */
export interface MemstackSessionOptions {
  /** The end user the session is about: `forget.run({ subject })` removes it. */
  subject?: string;
}

/** A `Session` of the OpenAI Agents SDK over the memstack conversation `sessionId`. */
export class MemstackSession implements Session {
  readonly sessionId: string;
  readonly subject: string | undefined;

  constructor(
    private readonly client: Memstack,
    sessionId: string,
    options: MemstackSessionOptions = {},
  ) {
    this.sessionId = sessionId;
    this.subject = options.subject;
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  private async thread(): Promise<Stored[]> {
    try {
      const found = await this.client.conversations.thread(this.sessionId);
      return (found.items as Stored[]).filter((m) => !m.content.startsWith(POPPED));
    } catch (error) {
      if (error instanceof NotFound) return [];
      throw error;
    }
  }

  private async length(): Promise<number> {
    let count = 0;
    try {
      for await (const _ of this.client.conversations.messages(this.sessionId, { limit: 1000 })) count += 1;
    } catch (error) {
      if (!(error instanceof NotFound)) throw error;
    }
    return count;
  }

  private async append(length: number, role: string, content: string, parent?: string | null): Promise<void> {
    const message: Record<string, unknown> = { role, content, message_id: `n${length}` };
    if (parent !== undefined) message.parent_message_id = parent;
    if (this.subject !== undefined) message.subject = this.subject;
    await this.client.conversations.append(this.sessionId, message as never);
  }

  /** The items, oldest first; `limit`: the newest that many. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    let found = await this.thread();
    if (limit !== undefined && limit >= 0) found = limit === 0 ? [] : found.slice(-limit);
    return found.map((m) => JSON.parse(m.content) as AgentInputItem);
  }

  /** Append `items`, one message each (a concurrent writer's items may fall between them). */
  async addItems(items: AgentInputItem[]): Promise<void> {
    const drafts = items.map((item) => [roleOf(item), JSON.stringify(item)] as const);
    let next = 0;
    for (let attempt = 0; next < drafts.length; attempt += 1) {
      if (attempt >= RETRIES) throw new Error(`session ${this.sessionId}: gave up after ${RETRIES} concurrent writes`);
      let length = await this.length();
      try {
        for (; next < drafts.length; next += 1, length += 1) {
          const [role, content] = drafts[next] as readonly [string, string];
          await this.append(length, role, content);
        }
      } catch (error) {
        if (!(error instanceof AlreadyExists)) throw error;
      }
    }
  }

  /** Remove and return the newest item (undefined when the session is empty). */
  async popItem(): Promise<AgentInputItem | undefined> {
    for (let attempt = 0; attempt < RETRIES; attempt += 1) {
      const length = await this.length();
      const newest = (await this.thread()).at(-1);
      if (newest === undefined) return undefined;
      try {
        await this.append(length, "system", POPPED + newest.message_id, newest.parent_message_id ?? null);
        return JSON.parse(newest.content) as AgentInputItem;
      } catch (error) {
        if (!(error instanceof AlreadyExists)) throw error;
      }
    }
    throw new Error(`session ${this.sessionId}: gave up after ${RETRIES} concurrent writes`);
  }

  /** Delete the conversation and its messages. */
  async clearSession(): Promise<void> {
    try {
      await this.client.conversations.delete(this.sessionId);
    } catch (error) {
      if (!(error instanceof NotFound)) throw error;
    }
  }
}
