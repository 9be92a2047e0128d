// A real `memstack serve` on a temporary SQLite file and a free loopback port, one per test file,
// and the Python of the repository to run memstack code beside it (the same file, other processes).

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { pythonCommand, pythonEnv } from "../scripts/python.mjs";
import { Memstack } from "../src/index.js";

/** A running server. */
export interface Served {
  /** `http://127.0.0.1:PORT`. */
  baseUrl: string;
  /** The engine URL it serves (`sqlite:///…`): Python opens the same file. */
  url: string;
  /** What it printed on standard error so far. */
  log(): string;
  /** Terminate it and remove its files. */
  stop(): Promise<void>;
}

export const PYTHON: string = pythonCommand();

/** The environment of every Python process the tests start (BM25 alone: no model loads). */
export function env(): NodeJS.ProcessEnv {
  return { ...pythonEnv(), MEMSTACK_EMBEDDER: "none" };
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Run `python -m memstack --url URL ARGS` to the end; its standard output (throws on failure). */
export function memstackCli(url: string, ...args: string[]): string {
  const run = spawnSync(PYTHON, ["-m", "memstack", "--url", url, ...args], { env: env(), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`memstack ${args.join(" ")} exited ${run.status}: ${run.stderr}`);
  return run.stdout;
}

/** Run a Python script (with `json` and `memstack` importable) and parse the JSON it prints last. */
export function python(script: string, input: unknown = null): any {
  const run = spawnSync(PYTHON, ["-c", script], { env: env(), encoding: "utf8", input: JSON.stringify(input) });
  if (run.status !== 0) throw new Error(`python exited ${run.status}: ${run.stderr}`);
  const lines = run.stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1] ?? "null");
}

/** A temporary folder and the SQLite engine URL of a file in it. */
export function tempDatabase(): { dir: string; url: string } {
  const dir = mkdtempSync(join(tmpdir(), "memstack-ts-"));
  return { dir, url: `sqlite:///${join(dir, "memstack.db")}` };
}

async function answers(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
    return response.status === 200 || response.status === 503;
  } catch {
    return false;
  }
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
  });
}

/**
 * Start `memstack serve` (keyless on loopback unless `args` say otherwise) on a new temporary
 * SQLite file, or on `database` when given (then `stop` leaves its files), on a free port or
 * `port`; resolves once `/healthz` answers.
 */
export async function serve(args: string[] = [], database?: { dir: string; url: string }, port?: number): Promise<Served> {
  const own = database === undefined;
  const db = database ?? tempDatabase();
  port ??= await freePort();
  const child = spawn(
    PYTHON,
    ["-m", "memstack", "--url", db.url, "serve", "--port", String(port), "--embedder", "none", ...args],
    { env: env(), stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (!(await answers(baseUrl))) {
    if (child.exitCode !== null) throw new Error(`memstack serve exited ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`memstack serve did not answer within 60 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    baseUrl,
    url: db.url,
    log: () => stderr,
    async stop() {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited(child);
      clearTimeout(killer);
      if (own) rmSync(db.dir, { recursive: true, force: true });
    },
  };
}

/**
 * One server for the whole test file and a client of it: started before the file's tests (then
 * `ready` gets both), stopped after them.
 */
export function servedClient(ready: (server: Served, mem: Memstack) => void): void {
  let running: Served | undefined;
  before(async () => {
    running = await serve();
    ready(running, new Memstack({ baseUrl: running.baseUrl }));
  });
  after(() => running?.stop());
}

/** `code` importing this package's sources (for the type check) or its build (to run). */
export function resolved(code: string, root: string, extension: string): string {
  return code
    .replace(/"@memstack\/client\/langgraph"/g, JSON.stringify(`${root}langgraph/index${extension}`))
    .replace(/"@memstack\/client"/g, JSON.stringify(`${root}index${extension}`));
}
