/** What the client knows of one operation of the HTTP API (generated into `generated/operations.ts`). */

/** An HTTP method the API uses. */
export type HttpMethod = "GET" | "PUT" | "POST" | "DELETE";

/**
 * How a query parameter is written: `text` as is (numbers and booleans as their text), `array`
 * once per item, `json` as JSON text.
 */
export type QueryKind = "text" | "array" | "json";

/**
 * Whether a call may be sent again after a 503 with `Retry-After`: `safe` always (it only reads),
 * `key` when the request carries that field (the caller's own id for what it writes: a repeat
 * writes the same thing again or is refused as existing), `never` otherwise (a repeat could
 * apply it twice).
 */
export type RetryRule =
  | { readonly kind: "safe" }
  | { readonly kind: "key"; readonly field: string }
  | { readonly kind: "never" };

/** One operation: its route, where its fields go, its retry rule and its client method. */
export interface OperationSpec {
  readonly method: HttpMethod;
  /** The path template, `{name}` for each path parameter. */
  readonly path: string;
  /** The path parameters, in the order the path names them. */
  readonly pathNames: readonly string[];
  /** The query parameters and how each is written. */
  readonly query: Readonly<Record<string, QueryKind>>;
  /** Whether it takes a JSON body (the fields outside the path and the query). */
  readonly body: boolean;
  /** The status of a success. */
  readonly status: number;
  /** Whether it answers a stream of server-sent events. */
  readonly stream: boolean;
  readonly retry: RetryRule;
  /** The client method that calls it (`sessions.get`), or null for routes outside the registry. */
  readonly client: string | null;
}
