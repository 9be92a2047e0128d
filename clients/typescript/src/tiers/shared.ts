/** Shared boards: keys with versions (compare-and-set, long polls), the semantic cache, documents. */

import { sharedMethods } from "../generated/methods.js";
import type { Transport } from "../transport.js";
import { watch, type WatchOptions } from "./watch.js";

/** The `shared` namespace of a {@link Memstack} client. */
export function shared(t: Transport) {
  return {
    ...sharedMethods(t),
    /**
     * Watch a board: `for await (const event of mem.shared.watch(name, { signal }))` gives its
     * `snapshot`, then a `change` per write (server-sent events, reconnecting when they break).
     */
    watch: Object.assign((name: string, options?: WatchOptions) => watch(t, name, options), {
      operation: "shared_watch" as const,
    }),
  };
}

/** The `shared` namespace. */
export type Shared = ReturnType<typeof shared>;
