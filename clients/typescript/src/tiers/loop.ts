/** The memory loop: remember a user's messages, recall what is known about them. */

import { method } from "../method.js";
import type { Transport } from "../transport.js";

/** The `loop` namespace of a {@link Memstack} client. */
export function loop(t: Transport) {
  return {
    /**
     * Append a user's messages (`{ user, messages }` or `{ user, content }`) to their conversation
     * and make them searchable in their scope at once; with a chat model the server extracts facts later.
     */
    remember: method(t, "loop_remember"),
    /** A user's best memories, extracted facts and turns for `{ query, user }`, each with its sources. */
    recall: method(t, "loop_recall"),
  };
}

/** The `loop` namespace. */
export type Loop = ReturnType<typeof loop>;
