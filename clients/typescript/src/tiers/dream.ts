/** Dream passes over long-term memory: consolidation, preferences, dedupe; records, undo, feedback. */

import { method } from "../method.js";
import type { Transport } from "../transport.js";

/** The `dream` namespace of a {@link Memstack} client. */
export function dream(t: Transport) {
  return {
    /** Run passes over a scope (`{ scope, passes, dry_run, … }`): the plan, or what was applied. */
    run: method(t, "dream_run"),
    /** The scope's dream records, newest first (`{ scope, limit }`). */
    history: method(t, "dream_history"),
    /** One record with its changes (`{ scope }`). */
    show: method(t, "dream_show"),
    /** Undo a record's changes (`{ scope }`). */
    undo: method(t, "dream_undo"),
    /** Record feedback (`{ scope, kind, text }`) the preference pass learns from. */
    feedback: method(t, "dream_feedback"),
  };
}

/** The `dream` namespace. */
export type Dream = ReturnType<typeof dream>;
