/** The memory loop: remember a user's messages, recall what is known about them. */

import { loopMethods } from "../generated/methods.js";
import type { Transport } from "../transport.js";

/** The `loop` namespace of a {@link Memstack} client. */
export function loop(t: Transport) {
  return {
    ...loopMethods(t),
  };
}

/** The `loop` namespace. */
export type Loop = ReturnType<typeof loop>;
