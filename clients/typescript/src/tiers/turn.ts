/** The per-turn operations: the context builder and forget. */

import { contextMethods, forgetMethods } from "../generated/methods.js";
import type { Transport } from "../transport.js";

/** The `context` namespace of a {@link Memstack} client. */
export function context(t: Transport) {
  return contextMethods(t);
}

/** The `forget` namespace of a {@link Memstack} client. */
export function forget(t: Transport) {
  return forgetMethods(t);
}

/** The `context` namespace. */
export type Context = ReturnType<typeof context>;
/** The `forget` namespace. */
export type Forget = ReturnType<typeof forget>;
