/** Working memory: path-keyed scratch entries with TTLs, a cap per namespace. */

import { cursorPaged, method } from "../method.js";
import type { Transport } from "../transport.js";

/** The `working` namespace of a {@link Memstack} client. */
export function working(t: Transport) {
  return {
    /** Namespaces holding live entries (`{ prefix }`), sorted: `await` one page, `for await` every one. */
    namespaces: cursorPaged<"working_namespaces", string>(t, "working_namespaces"),
    /** The live entries of a namespace under a key prefix (`{ namespace, prefix }`), without values. */
    list: method(t, "working_list"),
    /** Search live entries across namespaces (`{ query, namespace?, prefix?, tags?, limit }`). */
    search: method(t, "working_search"),
    /** Delete the entries of a namespace (`{ namespace, prefix? }`). */
    clear: method(t, "working_clear"),
    /**
     * Write an entry (`{ namespace, value, ttl_seconds?, category?, tags? }`); `NamespaceFull`
     * (429) when the namespace holds its cap of live entries.
     */
    set: method(t, "working_set"),
    /** Read an entry (`{ namespace }`); `EntryNotFound` when missing or expired. */
    get: method(t, "working_get"),
    /** Delete an entry (`{ namespace }`). */
    delete: method(t, "working_delete"),
  };
}

/** The `working` namespace. */
export type Working = ReturnType<typeof working>;
