/** Long-term memories: save, search (BM25 or hybrid, one filter language), scopes, categories, tags. */

import { cursorPaged, method } from "../method.js";
import type { CallOptions, Transport } from "../transport.js";
import type { Output, Params } from "../types.js";

/** The `memories` namespace of a {@link Memstack} client. */
export function memories(t: Transport) {
  return {
    /** Every scope holding memories, sorted: `await` one page, `for await` every scope. */
    scopes: cursorPaged<"memories_scopes", string>(t, "memories_scopes"),
    /**
     * Save a memory (`{ scope, content, category?, tags?, metadata?, subject? }`); with `id` it is
     * saved under that id (an update when it exists), and retried once after a 503.
     */
    save: save(t),
    /**
     * Save many memories of one scope in one transaction (`{ scope, items: [{ content, id?, tags?, … }] }`,
     * 1-1000 items): all of them are saved, or on any error none. Resolves to `{ items }` as stored.
     */
    saveMany: method(t, "memories_save_many"),
    /** Search a scope (`{ query, scope, mode, tags, filter, limit, … }`): hits best first, with scores. */
    search: method(t, "memories_search"),
    /** One memory by id (`{ scope }`); `EntryNotFound` when unknown. */
    get: method(t, "memories_get"),
    /** Every recorded change of one memory, oldest first (`{ scope }`): old and new version, op, actor. */
    history: method(t, "memories_history"),
    /** Delete one memory by id (`{ scope }`). */
    delete: method(t, "memories_delete"),
    /** The category paths of a scope with their counts. */
    categories: method(t, "memories_categories"),
    /** The tags of a scope with their counts. */
    tags: method(t, "memories_tags"),
  };
}

/** `save(params, options?)`: `POST /v1/memories`, or `PUT /v1/memories/{id}` when `params.id` is given. */
export interface Save {
  (params: Params<"memories_save">, options?: CallOptions): Promise<Output<"memories_save">>;
  readonly operation: "memories_save";
}

function save(t: Transport): Save {
  const call = (params: Params<"memories_save">, options: CallOptions = {}) => {
    const input = { ...params } as Record<string, unknown>;
    const byId = typeof input.id === "string";
    return t.call(byId ? "memories_save_1" : "memories_save", input, options) as Promise<Output<"memories_save">>;
  };
  return Object.assign(call, { operation: "memories_save" as const });
}

/** The `memories` namespace. */
export type Memories = ReturnType<typeof memories>;
