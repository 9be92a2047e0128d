/** The service itself: its agent tools and what it runs on. */

import { toolsMethods } from "../generated/methods.js";
import type { CallOptions, Transport } from "../transport.js";
import type { Input, Output } from "../types.js";

type ToolCall = Input<"tools_call">;

/** The `tools` namespace of a {@link Memstack} client: the agent memory tools over HTTP. */
export function tools(t: Transport) {
  return {
    ...toolsMethods(t),
    /**
     * Run one tool call as a model emitted it: `call(name, arguments, { session_id, scope,
     * namespace })` (arguments an object or the model's JSON text). `UnknownTool` (404) for a
     * name not offered.
     */
    call: Object.assign(
      (
        name: string,
        args: ToolCall["arguments"] = {},
        context: Omit<ToolCall, "name" | "arguments"> = {},
        options: CallOptions = {},
      ) =>
        t.call("tools_call", { ...context, name, arguments: args }, options) as Promise<
          Output<"tools_call">
        >,
      { operation: "tools_call" as const },
    ),
  };
}

/** The `info` namespace of a {@link Memstack} client. */
export function info(t: Transport) {
  return {
    /** The server's version, engine and retrieval setting. */
    get: Object.assign(
      (options: CallOptions = {}) => t.call("info", {}, options) as Promise<Output<"info">>,
      { operation: "info" as const },
    ),
  };
}

/** The `tools` namespace. */
export type Tools = ReturnType<typeof tools>;
/** The `info` namespace. */
export type Info = ReturnType<typeof info>;
