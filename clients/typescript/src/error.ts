/** The root of the errors the client throws (the generated classes in `generated/problems.ts` derive from it). */

/** An RFC 9457 problem as the server sends it (`application/problem+json`). */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  /** The memstack error class name; absent on plain HTTP errors (then `title` names them). */
  error?: string | null;
  /** A 422's issues: where (`["body", "limit"]`) and what. */
  errors?: Array<{ loc: string[]; msg: string }>;
  [field: string]: unknown;
}

/** What a {@link MemstackError} is built from. */
export interface ErrorInit {
  /** The HTTP status (0: no answer came, as for a {@link NetworkError}). */
  status?: number;
  /** The problem body, when the server sent one. */
  problem?: Problem | null;
  /** The operation called (`sessions_get`). */
  operation?: string | null;
  /** True when this is the answer to the one retry after a 503. */
  retried?: boolean;
  /** The seconds a `Retry-After` header asked to wait, if any. */
  retryAfter?: number | null;
  cause?: unknown;
}

/**
 * Any failure of a memstack call. Each error the server names (the `error` of its problem, the
 * same name as the Python exception class) is thrown as the class of that name, so
 * `catch (e) { if (e instanceof NotFound) … }` catches `SessionNotFound` and `EntryNotFound` too,
 * as `except NotFound` does in Python.
 */
export class MemstackError extends Error {
  override readonly name: string = "MemstackError";
  /** The HTTP status (0 when no answer came). */
  readonly status: number;
  /** The problem body, when the server sent one. */
  readonly problem: Problem | null;
  /** The operation called (`sessions_get`), when the error comes from one. */
  readonly operation: string | null;
  /**
   * True when this is the answer to the one retry after a 503: the first attempt may have been
   * applied (a write retried by its idempotency key that answers `AlreadyExists` did land).
   */
  readonly retried: boolean;
  /** The seconds a `Retry-After` header asked to wait, if any. */
  readonly retryAfter: number | null;

  constructor(message: string, init: ErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status ?? 0;
    this.problem = init.problem ?? null;
    this.operation = init.operation ?? null;
    this.retried = init.retried ?? false;
    this.retryAfter = init.retryAfter ?? null;
  }
}

/** No answer came: the connection failed or broke (the server is down, a proxy dropped it). */
export class NetworkError extends MemstackError {
  override readonly name: string = "NetworkError";
}
