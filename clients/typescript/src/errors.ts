/** Typed errors from problem bodies: the class named by the problem, else the one its status implies. */

import { MemstackError, type Problem } from "./error.js";
import { ERROR_CLASSES, ERROR_TREE } from "./generated/problems.js";

export { MemstackError, NetworkError, type ErrorInit, type Problem } from "./error.js";
export * from "./generated/problems.js";

const TREE: Readonly<Record<string, { parent: string | null; status: number }>> = ERROR_TREE;

function depth(name: string): number {
  let steps = 0;
  for (let parent = TREE[name]?.parent ?? null; parent !== null; parent = TREE[parent]?.parent ?? null) steps += 1;
  return steps;
}

/** Per status, the one class nearest the root answered with it (none where two tie). */
const BY_STATUS: ReadonlyMap<number, typeof MemstackError> = (() => {
  const best = new Map<number, { depth: number; names: string[] }>();
  for (const [name, { status }] of Object.entries(TREE)) {
    if (!status || name === "MemstackError") continue;
    const d = depth(name);
    const seen = best.get(status);
    if (!seen || d < seen.depth) best.set(status, { depth: d, names: [name] });
    else if (d === seen.depth) seen.names.push(name);
  }
  const out = new Map<number, typeof MemstackError>();
  for (const [status, { names }] of best) {
    const only = names.length === 1 ? ERROR_CLASSES[names[0] as string] : undefined;
    if (only) out.set(status, only);
  }
  return out;
})();

/** The class of a problem: by its `error` name, else its `title`, else its status, else MemstackError. */
export function errorClass(status: number, problem: Problem | null): typeof MemstackError {
  for (const name of [problem?.error, problem?.title]) {
    if (typeof name === "string" && Object.prototype.hasOwnProperty.call(ERROR_CLASSES, name)) {
      return ERROR_CLASSES[name] as typeof MemstackError;
    }
  }
  return BY_STATUS.get(status) ?? MemstackError;
}
