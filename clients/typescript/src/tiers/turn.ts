/** The per-turn operations: the context builder and forget. */

import { method } from "../method.js";
import type { Transport } from "../transport.js";

/** The `context` namespace of a {@link Memstack} client. */
export function context(t: Transport) {
  return {
    /**
     * The messages an LLM sees this turn (`{ session_id, message, … }`): recalled memories,
     * working memory, recent turns, within a token budget.
     */
    build: method(t, "context_build"),
  };
}

/** The `forget` namespace of a {@link Memstack} client. */
export function forget(t: Transport) {
  return {
    /** Forget exactly one thing (`{ subject }`, a session, a conversation…), verify nothing is left: the report. */
    run: method(t, "forget"),
  };
}

/** The `context` namespace. */
export type Context = ReturnType<typeof context>;
/** The `forget` namespace. */
export type Forget = ReturnType<typeof forget>;
