/** Shared boards: keys with versions (compare-and-set, long polls), the semantic cache, documents. */

import { cursorPaged, method } from "../method.js";
import type { Transport } from "../transport.js";
import { watch, type WatchOptions } from "./watch.js";

/** The `shared` namespace of a {@link Memstack} client. */
export function shared(t: Transport) {
  return {
    /** The boards that hold anything, sorted: `await` one page, `for await` every board. */
    list: cursorPaged<"shared_list", string>(t, "shared_list"),
    /** A whole board (its snapshot). */
    show: method(t, "shared_show"),
    /** A key with its version (`{ wait }`: seconds to long-poll for a missing key; `WaitTimeout` after). */
    get: method(t, "shared_get"),
    /** Write a key (`{ value, version? }`: with `version`, only if the key is at it, else `Conflict`). */
    put: method(t, "shared_put"),
    /** Delete a key; `EntryNotFound` when the board has no such key. */
    delete: method(t, "shared_delete"),
    /**
     * Watch a board: `for await (const event of mem.shared.watch(name, { signal }))` gives its
     * `snapshot`, then a `change` per write (server-sent events, reconnecting when they break).
     */
    watch: Object.assign((name: string, options?: WatchOptions) => watch(t, name, options), {
      operation: "shared_watch" as const,
    }),
    /** The board's semantic cache of answers. */
    cache: {
      /** A cached answer to a similar earlier question (`{ query, threshold? }`), counting a hit or a miss. */
      lookup: method(t, "cache_lookup"),
      /** Store an answer (`{ query, response, ttl_seconds?, metadata? }`). */
      store: method(t, "cache_store"),
      /** Stored entries nearest a query, best first. */
      search: method(t, "cache_search"),
      /** Delete entries similar to a query. */
      invalidate: method(t, "cache_invalidate"),
      /** Hits, misses, hit rate and live entries. */
      stats: method(t, "cache_stats"),
      /** Delete every entry and reset the counters. */
      clear: method(t, "cache_clear"),
    },
    /** The board's document store. */
    documents: {
      /** The document keys. */
      keys: method(t, "documents_keys"),
      /** Documents nearest a query (`{ query, limit, filter?, offset? }`). */
      search: method(t, "documents_search"),
      /** Store a document (`{ content, metadata? }`). */
      put: method(t, "documents_put"),
      /** One document; `EntryNotFound` when unknown. */
      get: method(t, "documents_get"),
      /** Delete a document. */
      delete: method(t, "documents_delete"),
    },
  };
}

/** The `shared` namespace. */
export type Shared = ReturnType<typeof shared>;
