/** Session state: a key-value map per session id, counters, the operation history. */

import { cursorPaged, method } from "../method.js";
import type { CallOptions, Transport } from "../transport.js";
import type { Output } from "../types.js";

/** The `sessions` namespace of a {@link Memstack} client. */
export function sessions(t: Transport) {
  return {
    /** The live session ids, sorted: `await` one page (`{items, next_cursor}`), `for await` every id. */
    list: cursorPaged<"sessions_list", string>(t, "sessions_list"),
    /** Create an empty session (`ttl_hours`, `subject`); `SessionExists` when it is live. */
    create: method(t, "sessions_create"),
    /** A session with every key and value; `SessionNotFound` when unknown or expired. */
    show: method(t, "sessions_show"),
    /** Delete a session and all its keys. */
    delete: method(t, "sessions_delete"),
    /** The keys of a session, sorted. */
    keys: method(t, "sessions_keys"),
    /** Remove one key (`{ key }`), or every key of a session. */
    clear: clear(t),
    /** Read one value; `EntryNotFound` for a missing key. */
    get: method(t, "sessions_get"),
    /** Store a JSON value under a key (`{ value, create }`: `create` makes the session first). */
    put: method(t, "sessions_put"),
    /** Add a number (`{ amount }`, default 1) to the number at a key, atomically: the new value. */
    increment: method(t, "sessions_increment"),
    /** The session's operation history, oldest first (`{ limit }`: the newest N, 0 all). */
    history: method(t, "sessions_history"),
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
