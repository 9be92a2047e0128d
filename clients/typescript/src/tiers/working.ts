/** Working memory: path-keyed scratch entries with TTLs, a cap per namespace. */

import { workingMethods } from "../generated/methods.js";
import type { Transport } from "../transport.js";

/** The `working` namespace of a {@link Memstack} client. */
export function working(t: Transport) {
  return {
    ...workingMethods(t),
  };
}

/** The `working` namespace. */
export type Working = ReturnType<typeof working>;
