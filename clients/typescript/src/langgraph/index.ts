/**
 * A LangGraph.js store over memstack's `/v1/store` operations: a JavaScript graph and a Python
 * graph (`MemstackStore` of `memstack.doors.integrations.langgraph`) share one store.
 *
 * Needs the peer dependency `@langchain/langgraph-checkpoint` (the plain client does not).
 *
 * @packageDocumentation
 */

import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from "@langchain/langgraph-checkpoint";
import { Memstack } from "../client.js";
import { EntryNotFound } from "../errors.js";
import type { ClientOptions } from "../transport.js";
import type { Output } from "../types.js";

/** How items expire (LangGraph's TTL configuration; minutes). */
export interface StoreTtl {
  /** Minutes a put item lives when its put names no `ttl` (default: forever). */
  defaultTtl?: number;
  /** Whether reads restart the TTL of what they read when they do not say (default: true). A store
   * without a TTL configuration never does: its reads never write. */
  refreshOnRead?: boolean;
}

/** Options of a {@link MemstackStore}: a client, or the options to make one, and its TTLs. */
export type MemstackStoreOptions = ({ client: Memstack } | ClientOptions) & { ttl?: StoreTtl };

/** A get that may restart the item's TTL. */
export type StoreGetOperation = GetOperation & { refreshTtl?: boolean };
/** A put that may set the item's TTL (minutes; null: forever). */
export type StorePutOperation = PutOperation & { ttl?: number | null };
/** A search that may restart the TTL of the items found. */
export type StoreSearchOperation = SearchOperation & { refreshTtl?: boolean };

type StoreItem = Output<"store_get">;
type Found = Output<"store_search">["items"][number];

function item(wire: StoreItem): Item {
  return {
    value: wire.value,
    key: wire.key,
    namespace: wire.namespace,
    createdAt: new Date(wire.created_at),
    updatedAt: new Date(wire.updated_at),
  };
}

function searchItem(wire: Found): SearchItem {
  const out: SearchItem = item(wire);
  if (wire.score !== null && wire.score !== undefined) out.score = wire.score;
  return out;
}

/**
 * LangGraph.js's `BaseStore` on a memstack server. Every operation is one HTTP call, run in the
 * order given; items, filters, namespace listings and TTLs behave as LangGraph's stores do (the
 * server runs LangGraph's semantics: `memstack.doors.integrations.langgraph.MemstackStore`).
 *
 * @example
 * const store = new MemstackStore({ baseUrl: "http://127.0.0.1:8765", apiKey });
 * await store.put(["users", "alice"], "prefs", { theme: "dark" });
 * const graph = builder.compile({ store });
 */
export class MemstackStore extends BaseStore {
  /** The client the store calls through. */
  readonly client: Memstack;
  /** The TTL configuration (null: items live until deleted unless a put says otherwise). */
  readonly ttlConfig: StoreTtl | null;

  constructor(options: MemstackStoreOptions) {
    super();
    this.client = "client" in options ? options.client : new Memstack(options);
    this.ttlConfig = options.ttl ?? null;
  }

  /** True: puts take a `ttl`, reads a `refreshTtl`. */
  get supportsTtl(): boolean {
    return true;
  }

  override async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) results.push(await this.run(op));
    return results as OperationResults<Op>;
  }

  /** The item, or null; `refreshTtl` restarts its TTL (default: the store's `refreshOnRead`). */
  override async get(namespace: string[], key: string, options: { refreshTtl?: boolean } = {}): Promise<Item | null> {
    validateNamespace(namespace, { allowEmpty: true, allowReservedRoot: true });
    const op: StoreGetOperation = { namespace, key, ...options };
    return (await this.batch([op]))[0] as Item | null;
  }

  /** Store an item (LangGraph's namespace rules); `options.ttl` in minutes (default: the store's `defaultTtl`). */
  override async put(
    namespace: string[],
    key: string,
    value: Record<string, any>,
    index?: false | string[],
    options: { ttl?: number | null } = {},
  ): Promise<void> {
    validateNamespace(namespace);
    const op: StorePutOperation = { namespace, key, value, ...(index === undefined ? {} : { index }), ...options };
    await this.batch([op]);
  }

  /** Items under a prefix; `refreshTtl` restarts the TTL of those found (default: `refreshOnRead`). */
  override async search(
    namespacePrefix: string[],
    options: { filter?: Record<string, any>; limit?: number; offset?: number; query?: string; refreshTtl?: boolean } = {},
  ): Promise<SearchItem[]> {
    validateNamespace(namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const { limit = 10, offset = 0, ...rest } = options;
    const op: StoreSearchOperation = { namespacePrefix, limit, offset, ...rest };
    return (await this.batch([op]))[0] as SearchItem[];
  }

  private refreshes(asked: boolean | undefined): boolean {
    return asked ?? (this.ttlConfig === null ? false : (this.ttlConfig.refreshOnRead ?? true));
  }

  private async run(op: Operation): Promise<unknown> {
    const store = this.client.store;
    if ("namespacePrefix" in op) {
      const search = op as StoreSearchOperation;
      const found = await store.search({
        namespace_prefix: search.namespacePrefix,
        filter: search.filter ?? null,
        query: search.query ?? null,
        limit: search.limit ?? 10,
        offset: search.offset ?? 0,
        refresh_ttl: this.refreshes(search.refreshTtl),
      });
      return found.items.map(searchItem);
    }
    if ("value" in op) {
      const put = op as StorePutOperation;
      if (put.value === null) {
        await store.delete({ namespace: put.namespace, key: put.key });
        return null; // a put's result, as LangGraph.js's InMemoryStore gives it
      }
      const ttl = put.ttl !== undefined ? put.ttl : this.ttlConfig?.defaultTtl;
      await store.put({
        namespace: put.namespace,
        key: put.key,
        value: put.value,
        index: put.index ?? null,
        ttl: ttl ?? null,
      });
      return null; // a put's result, as LangGraph.js's InMemoryStore gives it
    }
    if ("key" in op) {
      const get = op as StoreGetOperation;
      try {
        return item(await store.get({ namespace: get.namespace, key: get.key, refresh_ttl: this.refreshes(get.refreshTtl) }));
      } catch (error) {
        if (error instanceof EntryNotFound) return null;
        throw error;
      }
    }
    const list = op as ListNamespacesOperation;
    const prefixes = (list.matchConditions ?? []).filter((c) => c.matchType === "prefix");
    const suffixes = (list.matchConditions ?? []).filter((c) => c.matchType === "suffix");
    if (prefixes.length > 1 || suffixes.length > 1 || prefixes.length + suffixes.length < (list.matchConditions ?? []).length) {
      throw new TypeError("listNamespaces: at most one prefix and one suffix condition");
    }
    const found = await store.namespaces({
      prefix: prefixes[0]?.path ?? null,
      suffix: suffixes[0]?.path ?? null,
      max_depth: list.maxDepth ?? null,
      limit: list.limit ?? 100,
      offset: list.offset ?? 0,
    });
    return found.namespaces;
  }
}
