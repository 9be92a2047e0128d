// A fault-injecting HTTP relay on 127.0.0.1 in front of a real server: it forwards every request,
// except that it answers the next requests it is told to with a 503 problem (before forwarding, or
// after forwarding, as if the answer were lost on the way back).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/** One injected failure. */
export interface Fault {
  /** Seconds in the `Retry-After` header (null: no header). */
  retryAfter: number | null;
  /** `before`: the request never reaches the server; `after`: it does, its answer is replaced. */
  when: "before" | "after";
}

/** A running relay. */
export interface Relay {
  baseUrl: string;
  /** The requests it received, as `METHOD /path?query`. */
  seen: string[];
  /** Fail the next requests, one fault each, in order. */
  fail(...faults: Fault[]): void;
  close(): Promise<void>;
}

const PROBLEM = JSON.stringify({
  type: "about:blank",
  title: "EngineUnavailable",
  status: 503,
  detail: "the storage engine is unavailable; try again shortly",
  error: "EngineUnavailable",
});

function body(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

function unavailable(response: ServerResponse, fault: Fault): void {
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (fault.retryAfter !== null) headers["retry-after"] = String(fault.retryAfter);
  response.writeHead(503, headers).end(PROBLEM);
}

/** A relay to `target` (a base URL). */
export async function relay(target: string): Promise<Relay> {
  const faults: Fault[] = [];
  const seen: string[] = [];
  const server: Server = createServer(async (request, response) => {
    seen.push(`${request.method} ${request.url}`);
    const fault = faults.shift();
    const payload = await body(request);
    if (fault?.when === "before") return unavailable(response, fault);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "content-length") headers.set(name, value);
    }
    const init: RequestInit = { method: request.method ?? "GET", headers };
    if (payload.length) init.body = new Uint8Array(payload);
    const answer = await fetch(target + request.url, init);
    const text = Buffer.from(await answer.arrayBuffer());
    if (fault?.when === "after") return unavailable(response, fault);
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (name !== "content-length" && name !== "transfer-encoding" && name !== "content-encoding") out[name] = value;
    });
    response.writeHead(answer.status, out).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    fail: (...more) => faults.push(...more),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
