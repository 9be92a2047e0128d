/** Dream passes over long-term memory: consolidation, preferences, dedupe; records, undo, feedback. */

import { dreamMethods } from "../generated/methods.js";
import type { Transport } from "../transport.js";

/** The `dream` namespace of a {@link Memstack} client. */
export function dream(t: Transport) {
  return {
    ...dreamMethods(t),
  };
}

/** The `dream` namespace. */
export type Dream = ReturnType<typeof dream>;
