/** Watching a shared board: its server-sent events, read through `fetch`. */

import { MemstackError, NetworkError } from "../error.js";
import type { operations } from "../generated/openapi.js";
import { serverEvents } from "../sse.js";
import { abortReason, sleep, type CallOptions, type Transport } from "../transport.js";

/** The board as it is, the first event of a watch. */
export interface BoardSnapshot {
  event: "snapshot";
  name: string;
  /** Every key of the board with its value (its reserved keys too). */
  snapshot: Record<string, any>;
}

/** One write to a board. */
export interface BoardChange {
  event: "change";
  key: string;
  value?: any;
  previous?: any;
  writer?: string;
  network_name?: string;
  /** ISO 8601, UTC (`Z`). */
  timestamp: string;
  correlation_id?: string;
}

/**
 * An event of a board: its `snapshot` first, then one `change` per write. The data of the server's
 * events (`GET /v1/shared/{name}/events`; its schema is the `contentSchema` of the event's `data`
 * in the OpenAPI document, which the generator types as text).
 */
export type BoardEvent = BoardSnapshot | BoardChange;

/** The event as the document types it (its data still JSON text). */
export type RawBoardEvent = operations["shared_watch"]["responses"][200]["content"]["text/event-stream"];

/** Options of {@link watch}. */
export interface WatchOptions extends CallOptions {
  /** Connect again when the stream breaks (starting with a new snapshot). Default true. */
  reconnect?: boolean;
}

const RECONNECT_SECONDS = 1;

function failedToConnect(error: unknown): boolean {
  return error instanceof NetworkError || (error instanceof MemstackError && error.status >= 500);
}

/**
 * The events of board `name`, until `signal` aborts (then the iteration rejects with its reason) or
 * the loop leaves (the connection closes). A stream that breaks, or a server that cannot be
 * reached or answers 5xx, is tried again after a second (the server's `retry:` field says
 * otherwise) unless `reconnect` is false; any other error is thrown.
 */
export async function* watch(
  t: Transport,
  name: string,
  options: WatchOptions = {},
): AsyncGenerator<BoardEvent, void, undefined> {
  const { reconnect = true, ...call } = options;
  let wait = RECONNECT_SECONDS;
  for (;;) {
    let body: ReadableStream<Uint8Array> | null = null;
    try {
      body = (await t.send("shared_watch", { name }, call)).body;
    } catch (error) {
      if (!reconnect || call.signal?.aborted || !failedToConnect(error)) throw error;
    }
    if (body !== null) {
      try {
        for await (const event of serverEvents(body)) {
          if (event.retry !== null) wait = event.retry / 1000;
          yield JSON.parse(event.data) as BoardEvent; // the whole event: its `event` field names it too
        }
      } catch (error) {
        if (call.signal?.aborted) throw abortReason(call.signal);
        if (!reconnect) throw new NetworkError(`the events of board ${name} broke off`, { cause: error });
      }
    }
    if (!reconnect) return;
    await sleep(wait, call.signal);
  }
}
