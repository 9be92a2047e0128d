/** The turn log: copy its older entries into conversations, where the dream passes read turns. */

import { turnsMethods } from "../generated/methods.js";
import type { Transport } from "../transport.js";

/** The `turns` namespace of a {@link Memstack} client. */
export function turns(t: Transport) {
  return {
    ...turnsMethods(t),
  };
}

/** The `turns` namespace. */
export type Turns = ReturnType<typeof turns>;
