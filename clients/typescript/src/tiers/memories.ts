/** Long-term memories: save, search (BM25 or hybrid, one filter language), scopes, categories, tags. */

import { memoriesMethods } from "../generated/methods.js";
import type { CallOptions, Transport } from "../transport.js";
import type { Output, Params } from "../types.js";

/** The `memories` namespace of a {@link Memstack} client. */
export function memories(t: Transport) {
  return {
    ...memoriesMethods(t),
    /**
     * Save a memory (`{ scope, content, category?, tags?, metadata?, subject?, … }`); with `id` it is
     * saved under that id (an update when it exists), and retried once after a 503.
     */
    save: save(t),
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
