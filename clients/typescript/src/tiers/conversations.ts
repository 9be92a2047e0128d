/** Conversations: messages with branches, the active thread, the token-limited history. */

import { conversationsMethods } from "../generated/methods.js";
import { inputOf, type Args, type PagedMethod } from "../method.js";
import { Paged } from "../paging.js";
import type { Transport } from "../transport.js";
import type { Output } from "../types.js";

const DEFAULT_PAGE = 100;
type Messages = Output<"conversations_messages">;
type Message = Messages extends { items: Array<infer M> } ? M : unknown;

/** The `conversations` namespace of a {@link Memstack} client. */
export function conversations(t: Transport) {
  return {
    ...conversationsMethods(t),
    /** Messages in order from `start` (`{ start, limit }`): `await` one page, `for await` every message. */
    messages: messages(t),
  };
}

function messages(t: Transport): PagedMethod<"conversations_messages", Message> {
  const call = (...args: Args<"conversations_messages">) => {
    const [input, options] = inputOf("conversations_messages", args);
    const start = typeof input.start === "number" ? input.start : 0;
    // The limit is sent, so a short page is known to be the last.
    const limit = typeof input.limit === "number" ? input.limit : DEFAULT_PAGE;
    const fetchPage = (after: unknown) =>
      t.call("conversations_messages", { ...input, limit, start: after ?? start }, options) as Promise<Messages>;
    return new Paged<Message, Messages>(
      fetchPage,
      (page) => page.items as Message[],
      (page, after) => {
        const at = typeof after === "number" ? after : start;
        return page.items.length < limit ? null : at + page.items.length;
      },
    );
  };
  return Object.assign(call, { operation: "conversations_messages" as const });
}

/** The `conversations` namespace. */
export type Conversations = ReturnType<typeof conversations>;
