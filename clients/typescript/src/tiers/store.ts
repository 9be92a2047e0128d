/** The LangGraph store over HTTP: namespaced items (the LangGraph.js store calls these). */

import { method } from "../method.js";
import type { Transport } from "../transport.js";

/** The `store` namespace of a {@link Memstack} client (see `@memstack/client/langgraph` for the `BaseStore`). */
export function store(t: Transport) {
  return {
    /** Store an item (`{ namespace, key, value, index?, ttl? }`; `ttl` in minutes), replacing it. */
    put: method(t, "store_put"),
    /** Read an item (`{ namespace, key, refresh_ttl? }`); `EntryNotFound` when there is none. */
    get: method(t, "store_get"),
    /** Items under a prefix (`{ namespace_prefix, filter?, query?, limit, offset }`), ranked by `query`. */
    search: method(t, "store_search"),
    /** The namespaces holding items (`{ prefix?, suffix?, max_depth?, limit, offset }`; `*` matches any label). */
    namespaces: method(t, "store_namespaces"),
    /** Delete an item (`{ namespace, key }`); no error when there is none. */
    delete: method(t, "store_delete"),
  };
}

/** The `store` namespace. */
export type Store = ReturnType<typeof store>;
