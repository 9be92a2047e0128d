// The package works as a copy, the way `npm install --install-links ../clients/typescript` installs it
// (and as a registry install would): `npm pack` (which builds dist/ by the prepare script), unpacked
// into another project's node_modules, with no path back to this source tree. The LangGraph.js
// store and the client are imported by their package names and run against a real server.

import { strict as assert } from "node:assert";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { serve, type Served } from "./_server.js";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));

let server: Served;
let project: string;

before(async () => {
  server = await serve();
  project = mkdtempSync(join(tmpdir(), "memstack-ts-installed-"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  execFileSync("npm", ["pack", "--silent", "--pack-destination", project], { cwd: PACKAGE, stdio: "pipe" });
  const tarball = readdirSync(project).find((name) => name.endsWith(".tgz")) as string;
  const copy = join(project, "node_modules", "@memstack", "client");
  mkdirSync(copy, { recursive: true });
  execFileSync("tar", ["-xzf", join(project, tarball), "-C", copy, "--strip-components=1"]);
  // The peer dependencies a LangGraph.js project has installed (this package's own copies).
  symlinkSync(join(PACKAGE, "node_modules", "@langchain"), join(project, "node_modules", "@langchain"), "dir");
});
after(async () => {
  rmSync(project, { recursive: true, force: true });
  await server.stop();
});

test("the copied package holds its build and nothing from the source tree", () => {
  const files = readdirSync(join(project, "node_modules", "@memstack", "client"));
  assert.deepEqual(files.sort(), ["README.md", "dist", "package.json"]);
});

test("the client and the LangGraph.js store run from the copy", () => {
  const script = join(project, "main.mjs");
  writeFileSync(
    script,
    `import { Memstack } from "@memstack/client";
import { MemstackStore } from "@memstack/client/langgraph";
const baseUrl = process.env.MEMSTACK_BASE_URL;
const store = new MemstackStore({ baseUrl });
await store.put(["users", "ann"], "prefs", { theme: "dark" });
const item = await store.get(["users", "ann"], "prefs");
if (item?.value.theme !== "dark") throw new Error("get: " + JSON.stringify(item));
const found = await store.search(["users"], { filter: { theme: "dark" } });
if (found.map((i) => i.key).join() !== "prefs") throw new Error("search: " + JSON.stringify(found));
const mem = new Memstack({ baseUrl });
console.log((await mem.info.get()).engine);
`,
  );
  const run = spawnSync(process.execPath, [script], {
    cwd: project,
    env: { ...process.env, MEMSTACK_BASE_URL: server.baseUrl },
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /sqlite/);
});
