/** Client methods made from operations: path fields as arguments, the other fields as one object. */

import { OPERATIONS, type OperationId } from "./generated/operations.js";
import { Paged, type CursorPage } from "./paging.js";
import type { CallOptions, Transport } from "./transport.js";
import type { Output, Params, PathArgs } from "./types.js";

/** An operation's fields outside its path; an operation without any takes `{}` alone. */
export type Fields<K extends OperationId> = keyof Params<K> extends never ? Record<string, never> : Params<K>;

/** The arguments of a method: its path fields, then its other fields (required when some are), then options. */
export type Args<K extends OperationId> = {} extends Fields<K>
  ? [...PathArgs<K>, Fields<K>?, CallOptions?]
  : [...PathArgs<K>, Fields<K>, CallOptions?];

/** A method calling one operation; `operation` names it. */
export interface Method<K extends OperationId> {
  (...args: Args<K>): Promise<Output<K>>;
  readonly operation: K;
}

/** A listing method: its call is a {@link Paged} (await a page, or iterate every item). */
export interface PagedMethod<K extends OperationId, Item> {
  (...args: Args<K>): Paged<Item, Output<K>>;
  readonly operation: K;
}

/** The item of a listing operation's page (`{ items: Item[], next_cursor }`). */
export type ItemOf<K extends OperationId> = Output<K> extends { items: Array<infer I> } ? I : unknown;

/** The request of a call made with `args`, and its options. */
export function inputOf(id: OperationId, args: readonly unknown[]): [Record<string, unknown>, CallOptions] {
  const names = OPERATIONS[id].pathNames;
  const params = args[names.length];
  if (params !== undefined && (params === null || typeof params !== "object" || Array.isArray(params))) {
    throw new TypeError(`${id}: the fields after ${names.length} path argument(s) must be an object`);
  }
  const input: Record<string, unknown> = { ...(params as Record<string, unknown> | undefined) };
  names.forEach((name, i) => {
    input[name] = args[i];
  });
  return [input, (args[names.length + 1] as CallOptions | undefined) ?? {}];
}

/** The method of operation `id`. */
export function method<K extends OperationId>(transport: Transport, id: K): Method<K> {
  const call = (...args: Args<K>) => {
    const [input, options] = inputOf(id, args);
    return transport.call(id, input, options) as Promise<Output<K>>;
  };
  return Object.assign(call, { operation: id });
}

/** The listing method of operation `id`, paged by `cursor` / `next_cursor`. */
export function cursorPaged<K extends OperationId, Item>(transport: Transport, id: K): PagedMethod<K, Item> {
  const call = (...args: Args<K>) => {
    const [input, options] = inputOf(id, args);
    const fetchPage = (after: unknown) =>
      transport.call(id, after === null ? input : { ...input, cursor: after }, options) as Promise<Output<K>>;
    return new Paged<Item, Output<K>>(
      fetchPage,
      (page) => (page as CursorPage<Item>).items,
      (page) => (page as CursorPage<Item>).next_cursor ?? null,
    );
  };
  return Object.assign(call, { operation: id });
}
