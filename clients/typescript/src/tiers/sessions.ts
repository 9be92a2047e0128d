/** Session state: a key-value map per session id, counters, the operation history. */

import { sessionsMethods } from "../generated/methods.js";
import type { CallOptions, Transport } from "../transport.js";
import type { Output } from "../types.js";

/** The `sessions` namespace of a {@link Memstack} client. */
export function sessions(t: Transport) {
  return {
    ...sessionsMethods(t),
    /** Remove one key (`{ key }`), or every key of a session. */
    clear: clear(t),
  };
}

/** `clear(sessionId, { key }?, options?)`: one key with `key`, else every key. */
export interface Clear {
  (sessionId: string, params?: { key?: string | null }, options?: CallOptions): Promise<Output<"sessions_clear">>;
  readonly operation: "sessions_clear";
}

function clear(t: Transport): Clear {
  const call = (sessionId: string, params: { key?: string | null } = {}, options: CallOptions = {}) => {
    const one = params.key !== undefined && params.key !== null;
    const input = one ? { session_id: sessionId, key: params.key } : { session_id: sessionId };
    return t.call(one ? "sessions_clear_1" : "sessions_clear", input, options) as Promise<Output<"sessions_clear">>;
  };
  return Object.assign(call, { operation: "sessions_clear" as const });
}

/** The `sessions` namespace. */
export type Sessions = ReturnType<typeof sessions>;
