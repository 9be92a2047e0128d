/** The LangGraph store over HTTP: namespaced items (the LangGraph.js store calls these). */

import { storeMethods } from "../generated/methods.js";
import type { Transport } from "../transport.js";

/** The `store` namespace of a {@link Memstack} client (see `@memstack/client/langgraph` for the `BaseStore`). */
export function store(t: Transport) {
  return {
    ...storeMethods(t),
  };
}

/** The `store` namespace. */
export type Store = ReturnType<typeof store>;
