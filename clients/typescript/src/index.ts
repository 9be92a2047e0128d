/**
 * The TypeScript client of memstack's HTTP service.
 *
 * @packageDocumentation
 */

export { Memstack } from "./client.js";
export * from "./errors.js";
export { OPERATIONS, type OperationId } from "./generated/operations.js";
export type { components, operations, paths } from "./generated/openapi.js";
export type { Args, Fields, Method, PagedMethod } from "./method.js";
export { Paged, type CursorPage } from "./paging.js";
export type { HttpMethod, OperationSpec, QueryKind, RetryRule } from "./spec.js";
export { serverEvents, type ServerEvent } from "./sse.js";
export type { BoardChange, BoardEvent, BoardSnapshot, RawBoardEvent, WatchOptions } from "./tiers/watch.js";
export {
  buildRequest,
  retryAfterSeconds,
  Transport,
  type CallOptions,
  type ClientOptions,
  type RetryEvent,
} from "./transport.js";
export type { Input, Output, Params, PathArgs } from "./types.js";
