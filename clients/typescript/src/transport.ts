/**
 * The HTTP core: builds each request from its operation's spec, sends it with `fetch`, turns a
 * problem body into its typed error, and sends a request once more after a 503 with
 * `Retry-After` when its operation's retry rule allows it.
 */

import { MemstackError, NetworkError, type Problem } from "./error.js";
import { errorClass } from "./errors.js";
import { OPERATIONS, type OperationId } from "./generated/operations.js";
import type { OperationSpec } from "./spec.js";

/** How a {@link Memstack} client reaches its server. */
export interface ClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8765`. */
  baseUrl: string;
  /** An API key (`memstack keys create`): sent as `Authorization: Bearer …`. */
  apiKey?: string;
  /** The tenant to act for (`X-Memstack-Tenant`): for keys of several tenants, or a keyless server. */
  tenant?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * The longest `Retry-After` (seconds) the client waits before its one retry; a longer wait is
   * not waited for (the 503's error is thrown). Default 30.
   */
  maxRetryDelay?: number;
  /** Called before the one retry of a request, after its 503 (e.g. to log it). */
  onRetry?: (event: RetryEvent) => void | Promise<void>;
}

/** Options of one call. */
export interface CallOptions {
  /** Aborts the call (and a retry's wait): the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Headers of this call alone. */
  headers?: Record<string, string>;
  /** `false`: never retry this call, whatever its rule. */
  retry?: boolean;
}

/** What {@link ClientOptions.onRetry} is told. */
export interface RetryEvent {
  operation: OperationId;
  /** The error of the first attempt (a 503). */
  error: MemstackError;
  /** Seconds waited before the retry. */
  delay: number;
}

const DEFAULT_MAX_RETRY_DELAY = 30;

/** Seconds a `Retry-After` value asks for (delta-seconds or an HTTP date), or null. */
export function retryAfterSeconds(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, (date - now) / 1000);
}

/** What an aborted call rejects with: the signal's reason, else an AbortError. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** Wait `seconds`; rejects with the signal's reason when it aborts first. */
export function sleep(seconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, seconds * 1000);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function queryText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value);
}

/** A request: its URL and JSON body (undefined: none). */
export interface Built {
  url: string;
  body: string | undefined;
}

/**
 * The URL and body of a call of `spec` with `input` (every field of its request by its server
 * name). Path fields fill the path, query fields the query string (arrays repeated, `json` fields
 * as JSON text), the rest is the JSON body of a PUT or POST, else more query parameters (the
 * server then refuses what the operation does not take, naming it).
 *
 * @throws TypeError a path field is missing or not a string.
 */
export function buildRequest(baseUrl: string, spec: OperationSpec, input: Record<string, unknown>): Built {
  const path = spec.path.replace(/\{([^}:]+)(?::path)?\}/g, (_, name: string) => {
    const value = input[name];
    if (typeof value !== "string") {
      throw new TypeError(`${spec.method} ${spec.path}: ${name} must be a string, got ${typeof value}`);
    }
    return encodeURIComponent(value);
  });
  const url = new URL(baseUrl.replace(/\/+$/, "") + path);
  const bodyFields: Record<string, unknown> = {};
  const sendsBody = spec.method === "POST" || spec.method === "PUT";
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined || spec.pathNames.includes(name)) continue;
    const kind = spec.query[name];
    if (kind === undefined && sendsBody) {
      bodyFields[name] = value;
      continue;
    }
    if (value === null) continue;
    if (kind === "array" && Array.isArray(value)) {
      for (const item of value) url.searchParams.append(name, queryText(item));
    } else if (kind === "json") {
      // The document types it as JSON text; an object given anyway is written as that text.
      url.searchParams.append(name, typeof value === "string" ? value : JSON.stringify(value));
    } else {
      url.searchParams.append(name, queryText(value));
    }
  }
  const body = sendsBody && (spec.body || Object.keys(bodyFields).length) ? JSON.stringify(bodyFields) : undefined;
  return { url: url.toString(), body };
}

function mayRetry(spec: OperationSpec, input: Record<string, unknown>): boolean {
  const rule = spec.retry;
  if (rule.kind === "safe") return true;
  if (rule.kind === "key") return input[rule.field] !== undefined && input[rule.field] !== null;
  return false;
}

async function problemOf(response: Response): Promise<Problem | null> {
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("json")) return null;
  try {
    const body: unknown = await response.json();
    return body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Problem) : null;
  } catch {
    return null;
  }
}

/** Sends the requests of one client. */
export class Transport {
  readonly baseUrl: string;
  private readonly options: ClientOptions;
  private readonly fetch: typeof fetch;

  constructor(options: ClientOptions) {
    if (!options || typeof options.baseUrl !== "string" || !/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError(`baseUrl must be an http(s) URL, got ${JSON.stringify(options?.baseUrl)}`);
    }
    this.baseUrl = options.baseUrl;
    this.options = options;
    const chosen = options.fetch ?? globalThis.fetch;
    if (typeof chosen !== "function") throw new TypeError("no fetch: pass options.fetch");
    this.fetch = chosen.bind(globalThis);
  }

  private headers(spec: OperationSpec, body: string | undefined, options: CallOptions): Headers {
    const headers = new Headers(this.options.headers);
    headers.set("accept", spec.stream ? "text/event-stream" : "application/json");
    if (body !== undefined) headers.set("content-type", "application/json");
    if (this.options.apiKey) headers.set("authorization", `Bearer ${this.options.apiKey}`);
    if (this.options.tenant) headers.set("x-memstack-tenant", this.options.tenant);
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
    return headers;
  }

  /**
   * Send operation `id` with `input` and return its successful response (a stream's body unread).
   *
   * @throws MemstackError (its subclass named by the server) for an error status.
   * @throws NetworkError when no answer came.
   * @throws the signal's reason when aborted.
   */
  async send(id: OperationId, input: Record<string, unknown>, options: CallOptions = {}): Promise<Response> {
    const spec: OperationSpec = OPERATIONS[id];
    const { url, body } = buildRequest(this.baseUrl, spec, input);
    const retryable = options.retry !== false && mayRetry(spec, input);
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.once(id, spec, url, body, options);
      } catch (error) {
        // A kept-alive connection the server closed as the request left ("other side closed")
        // gave no answer: what may be sent twice is sent once more, on a new connection.
        if (attempt > 0 || !retryable || !(error instanceof NetworkError)) throw error;
        continue;
      }
      if (response.ok) return response;
      const error = await this.errorOf(id, response, attempt > 0);
      const delay = error.retryAfter;
      const maxDelay = this.options.maxRetryDelay ?? DEFAULT_MAX_RETRY_DELAY;
      if (attempt > 0 || !retryable || response.status !== 503 || delay === null || delay > maxDelay) {
        throw error;
      }
      await this.options.onRetry?.({ operation: id, error, delay });
      await sleep(delay, options.signal);
    }
  }

  /** Send operation `id` and return its JSON result (see {@link send}). */
  async call(id: OperationId, input: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    const response = await this.send(id, input, options);
    if (response.status === 204) return undefined;
    try {
      return await response.json();
    } catch (cause) {
      if (options.signal?.aborted) throw abortReason(options.signal);
      throw new NetworkError(`${id}: the answer was not JSON or broke off`, {
        status: response.status,
        operation: id,
        cause,
      });
    }
  }

  private async once(
    id: OperationId,
    spec: OperationSpec,
    url: string,
    body: string | undefined,
    options: CallOptions,
  ): Promise<Response> {
    const init: RequestInit = { method: spec.method, headers: this.headers(spec, body, options) };
    if (body !== undefined) init.body = body;
    if (options.signal) init.signal = options.signal;
    try {
      return await this.fetch(url, init);
    } catch (cause) {
      if (options.signal?.aborted) throw abortReason(options.signal);
      // fetch's own message is generic ("fetch failed"): the reason is its cause's.
      const inner = (cause as { cause?: { message?: unknown } })?.cause?.message;
      const reason = `${String((cause as Error)?.message ?? cause)}${inner === undefined ? "" : `: ${String(inner)}`}`;
      throw new NetworkError(`${spec.method} ${url}: no answer (${reason})`, {
        operation: id,
        cause,
      });
    }
  }

  private async errorOf(id: OperationId, response: Response, retried: boolean): Promise<MemstackError> {
    const problem = await problemOf(response);
    const cls = errorClass(response.status, problem);
    const detail = problem?.detail ?? (response.statusText || `HTTP ${response.status}`);
    return new cls(String(detail), {
      status: response.status,
      problem,
      operation: id,
      retried,
      retryAfter: retryAfterSeconds(response.headers.get("retry-after")),
    });
  }
}
