/** The memstack client: one namespace per tier over one transport. */

import { conversations } from "./tiers/conversations.js";
import { dream } from "./tiers/dream.js";
import { memories } from "./tiers/memories.js";
import { loop } from "./tiers/loop.js";
import { info, tools } from "./tiers/service.js";
import { sessions } from "./tiers/sessions.js";
import { shared } from "./tiers/shared.js";
import { store } from "./tiers/store.js";
import { context, forget } from "./tiers/turn.js";
import { turns } from "./tiers/turns.js";
import { working } from "./tiers/working.js";
import { Transport, type ClientOptions } from "./transport.js";

/**
 * A client of one memstack server, acting for one tenant.
 *
 * Every method takes, after its path arguments and its fields, an optional `{ signal }` to abort
 * it. A failure throws the error class the server names (`SessionNotFound`, `NamespaceFull`, …,
 * all `MemstackError`s). A read, and a write carrying its idempotency key, is sent once more after
 * a 503 with `Retry-After`.
 *
 * @example
 * const mem = new Memstack({ baseUrl: "http://127.0.0.1:8765", apiKey: process.env.MEMSTACK_KEY });
 * await mem.sessions.put("s1", "topic", { value: { name: "billing" }, create: true });
 */
export class Memstack {
  /** The HTTP core (exposed for operations the namespaces do not wrap). */
  readonly transport: Transport;
  readonly sessions;
  readonly conversations;
  readonly memories;
  readonly working;
  readonly shared;
  readonly context;
  readonly tools;
  readonly dream;
  readonly forget;
  readonly loop;
  readonly turns;
  readonly info;
  readonly store;

  /** @throws TypeError a `baseUrl` that is not an http(s) URL, or no `fetch`. */
  constructor(options: ClientOptions) {
    const t = new Transport(options);
    this.transport = t;
    this.sessions = sessions(t);
    this.conversations = conversations(t);
    this.memories = memories(t);
    this.working = working(t);
    this.shared = shared(t);
    this.context = context(t);
    this.tools = tools(t);
    this.dream = dream(t);
    this.forget = forget(t);
    this.loop = loop(t);
    this.turns = turns(t);
    this.info = info(t);
    this.store = store(t);
  }
}
