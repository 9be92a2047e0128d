#!/usr/bin/env node
// LangGraph.js's own store tests run against this package's MemstackStore, with only their imports
// swapped.
//
//   node scripts/langgraph-compat.mjs --langgraphjs PATH [--workdir DIR]
//
// PATH is a checkout of the langchain-ai/langgraphjs repository (kept outside this repository; its
// tests are never copied into it). The script copies two of its test files into a scratch folder
// (--workdir, default a temporary one):
//
//   libs/checkpoint/src/tests/store.test.ts        the BaseStore and InMemoryStore tests
//   libs/checkpoint-redis/src/tests/store.int.test.ts  RedisStore's store behaviour
//
// and rewrites the imports of InMemoryStore and RedisStore to a shim module written beside them,
// whose classes are MemstackStore subclasses that only choose where the store lives (a fresh tenant
// of one `memstack serve`, started on a free loopback port, per store) and spell the options of the
// store they stand for (RedisStore's `ttl: { defaultTTL }` and `refreshTTL`). Vitest is installed
// into the scratch folder (never into this package). Tests of what memstack does not stand in for
// are excluded (EXCLUDED, each with its reason). The last line printed:
//   RESULT passed=… failed=… excluded=…
// This package must be built first (npm run build).

import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { pythonCommand, pythonEnv } from "./python.mjs";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const VITEST = "vitest@4.1.12";

// [file in the checkout, name in the scratch folder, import swaps]
const FILES = [
  [
    "libs/checkpoint/src/tests/store.test.ts",
    "store.test.ts",
    [
      ['from "../store/base.js"', 'from "@langchain/langgraph-checkpoint"'],
      ['from "../store/batch.js"', 'from "@langchain/langgraph-checkpoint"'],
      ['from "../store/memory.js"', 'from "./shim.js"'],
    ],
  ],
  [
    "libs/checkpoint-redis/src/tests/store.int.test.ts",
    "redis-store.test.ts",
    [
      ['from "../store.js"', 'from "./shim.js"'],
      ['from "./redis-container.js"', 'from "./shim.js"'],
    ],
  ],
];

// Test names (vitest's full names, " > " between describe blocks) left out, with the reason.
const EXCLUDED = {
  "RedisStore > RedisStore with Vector Search": "RedisStore's own vector index (a LangChain embeddings object on the client)",
  "RedisStore Comprehensive Tests > fromConnString": "RedisStore.fromConnString opens a Redis connection",
  "RedisStore Advanced Features > FilterBuilder": "unit tests of RedisStore's query builder class",
  "RedisStore Advanced Features > Store Statistics": "RedisStore.getStatistics is RedisStore's own",
  "RedisStore Vector Search with Distance Metrics": "RedisStore's own vector index and its distance metrics",
  "RedisStore > Basic Operations > should update an existing item":
    "reads RedisStore's snake_case `updated_at`; LangGraph.js's Item (and the InMemoryStore test of the same) has `updatedAt`",
  "Operation Type Guards": "the type-guard functions exported by RedisStore's own module",
};

function shim(baseUrl) {
  const store = pathToFileURL(join(PACKAGE, "dist", "langgraph", "index.js")).href;
  return `// Written by scripts/langgraph-compat.mjs: LangGraph.js's stores, played by MemstackStore.
import { MemstackStore } from ${JSON.stringify(store)};
let count = 0;
const fresh = () => \`compat\${process.pid}x\${Date.now()}x\${count++}\`;

/** A fresh tenant of the server per store: each test starts with an empty store. */
export class InMemoryStore extends MemstackStore {
  constructor() {
    super({ baseUrl: ${JSON.stringify(baseUrl)}, tenant: fresh() });
  }
}

/** RedisStore's options spelled as MemstackStore's. */
export class RedisStore extends MemstackStore {
  constructor(_client, options = {}) {
    const ttl = options.ttl
      ? { defaultTtl: options.ttl.defaultTTL, refreshOnRead: options.ttl.refreshOnRead }
      : undefined;
    super({ baseUrl: ${JSON.stringify(baseUrl)}, tenant: fresh(), ...(ttl ? { ttl } : {}) });
  }
  async setup() {}
  get(namespace, key, options = {}) {
    return super.get(namespace, key, { refreshTtl: options.refreshTTL });
  }
  search(prefix, options = {}) {
    const { refreshTTL, ...rest } = options;
    return super.search(prefix, { ...rest, refreshTtl: refreshTTL });
  }
  put(namespace, key, value, options) {
    if (Array.isArray(options) || options === false || options === undefined) return super.put(namespace, key, value, options);
    return super.put(namespace, key, value, options.index, { ttl: options.ttl });
  }
}
export class FilterBuilder {}

/** The Redis container of the tests: none is needed. */
export async function createRedisContainer() {
  return { client: null, cleanup: async () => {} };
}
`;
}

function freePort() {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });
}

async function serve(dir) {
  const port = await freePort();
  const url = `sqlite:///${join(dir, "memstack.db")}`;
  const child = spawn(pythonCommand(), ["-m", "memstack", "--url", url, "serve", "--port", String(port), "--embedder", "none"], {
    env: { ...pythonEnv(), MEMSTACK_EMBEDDER: "none" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { base, child };
    } catch {}
    if (child.exitCode !== null) throw new Error(`memstack serve exited ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("memstack serve did not start");
}

function parseArgs(argv) {
  const args = { langgraphjs: null, workdir: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--langgraphjs") args.langgraphjs = argv[++i];
    else if (argv[i] === "--workdir") args.workdir = argv[++i];
    else throw new Error(`unknown argument ${argv[i]} (--langgraphjs PATH, --workdir DIR)`);
  }
  if (!args.langgraphjs) throw new Error("--langgraphjs PATH (a checkout of langchain-ai/langgraphjs) is required");
  return args;
}

function countResults(report) {
  const counts = { passed: 0, failed: 0, excluded: 0 };
  const failures = [];
  for (const file of report.testResults ?? []) {
    for (const t of file.assertionResults ?? []) {
      const name = [...(t.ancestorTitles ?? []), t.title].join(" > ");
      if (t.status === "passed") counts.passed += 1;
      else if (t.status === "failed") {
        counts.failed += 1;
        failures.push(`${name}: ${(t.failureMessages ?? []).join(" ").split("\n")[0]}`);
      } else counts.excluded += 1;
    }
  }
  return { counts, failures };
}

async function main(argv) {
  const args = parseArgs(argv);
  if (!existsSync(join(PACKAGE, "dist", "langgraph", "index.js"))) throw new Error("build the package first: npm run build");
  const work = resolve(args.workdir ?? mkdtempSync(join(tmpdir(), "memstack-lgjs-")));
  mkdirSync(join(work, "tests"), { recursive: true });
  if (!existsSync(join(work, "node_modules", "vitest"))) {
    writeFileSync(join(work, "package.json"), JSON.stringify({ name: "lgjs-compat", private: true, type: "module" }));
    const install = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", VITEST], { cwd: work, stdio: "inherit" });
    if (install.status !== 0) throw new Error("npm install vitest failed");
  }
  for (const [from, to, swaps] of FILES) {
    let text = readFileSync(join(args.langgraphjs, from), "utf8");
    for (const [old, now] of swaps) {
      if (!text.includes(old)) throw new Error(`${from}: no ${old} to swap (the checkout changed)`);
      text = text.split(old).join(now);
    }
    writeFileSync(join(work, "tests", to), text);
  }
  // One copy of LangGraph's package for the tests and the store (InvalidNamespaceError's identity).
  const checkpoint = join(PACKAGE, "node_modules", "@langchain", "langgraph-checkpoint");
  writeFileSync(
    join(work, "vitest.config.mjs"),
    `export default { test: { testTimeout: 30000, hookTimeout: 60000, fileParallelism: false },` +
      ` resolve: { alias: { "@langchain/langgraph-checkpoint": ${JSON.stringify(checkpoint)} } } };\n`,
  );
  const server = await serve(work);
  try {
    writeFileSync(join(work, "tests", "shim.js"), shim(server.base));
    // vitest matches --testNamePattern against the titles joined by spaces.
    const excluded = Object.keys(EXCLUDED).map((name) =>
      name.split(" > ").join(" ").replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    );
    const pattern = `^(?!(${excluded.join("|")}))`;
    const report = join(work, "report.json");
    spawnSync(
      join(work, "node_modules", ".bin", "vitest"),
      ["run", "tests", "--reporter=json", `--outputFile=${report}`, "--testNamePattern", pattern],
      { cwd: work, stdio: ["ignore", "ignore", "inherit"] },
    );
    const { counts, failures } = countResults(JSON.parse(readFileSync(report, "utf8")));
    for (const failure of failures) console.log(`FAILED ${failure}`);
    for (const [name, why] of Object.entries(EXCLUDED)) console.log(`excluded: ${name} (${why})`);
    console.log(`RESULT passed=${counts.passed} failed=${counts.failed} excluded=${counts.excluded}`);
    return counts.failed === 0 ? 0 : 1;
  } finally {
    server.child.kill("SIGTERM");
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`error: ${error.message}`);
    process.exit(2);
  },
);
