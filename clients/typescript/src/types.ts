/** Request and result types of each operation, derived from the generated OpenAPI types. */

import type { operations } from "./generated/openapi.js";
import type { OPERATIONS, OperationId } from "./generated/operations.js";

export type { OperationId } from "./generated/operations.js";

type Present<T> = [Exclude<T, undefined>] extends [never] ? {} : Exclude<T, undefined>;
type Parameters<K extends OperationId> = operations[K] extends { parameters: infer P } ? P : {};
type PathOf<K extends OperationId> = Parameters<K> extends { path?: infer X } ? Present<X> : {};
type QueryOf<K extends OperationId> = Parameters<K> extends { query?: infer X } ? Present<X> : {};
type BodyOf<K extends OperationId> = operations[K] extends { requestBody?: infer B }
  ? Present<B> extends { content: { "application/json": infer J } }
    ? J
    : {}
  : {};

/** Every field of an operation's request (path, query and body), as the server names them. */
export type Input<K extends OperationId> = PathOf<K> & QueryOf<K> & BodyOf<K>;

type Json<R> = R extends { content: { "application/json": infer J } } ? J : never;
type Responses<K extends OperationId> = operations[K] extends { responses: infer R } ? R : never;

/** The JSON result of an operation (its success response). */
export type Output<K extends OperationId> = Responses<K> extends infer R
  ? R extends { 200: infer S }
    ? Json<S>
    : R extends { 201: infer S }
      ? Json<S>
      : unknown
  : unknown;

/** The names of an operation's path parameters. */
export type PathNames<K extends OperationId> = (typeof OPERATIONS)[K]["pathNames"];

type Strings<T extends readonly unknown[]> = T extends readonly [unknown, ...infer Rest] ? [string, ...Strings<Rest>] : [];

/** One string per path parameter, in path order. */
export type PathArgs<K extends OperationId> = Strings<PathNames<K>>;

/** The fields of an operation's request outside its path. */
export type Params<K extends OperationId> = Omit<Input<K>, PathNames<K>[number]>;
