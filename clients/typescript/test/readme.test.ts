// Every TypeScript example of the package's README type-checks and runs against a real server.

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import ts from "typescript";
import { resolved, serve, type Served } from "./_server.js";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));
const BUILT = fileURLToPath(new URL("../src/", import.meta.url));
const README = readFileSync(join(PACKAGE, "README.md"), "utf8");
const EXAMPLES = [...README.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string);

let server: Served;
let dir: string;

before(async () => {
  server = await serve();
  dir = mkdtempSync(join(tmpdir(), "memstack-ts-readme-"));
  // The examples are ES modules (top-level await), as in a package of "type": "module".
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await server.stop();
});

test("the README has an example per tier", () => {
  const calls = EXAMPLES.join("\n");
  for (const tier of ["sessions", "conversations", "memories", "working", "shared", "context", "tools", "dream", "forget", "info"]) {
    assert.match(calls, new RegExp(`mem\\.${tier}\\.`), `no example calls mem.${tier}`);
  }
  assert.match(calls, /new MemstackStore\(/);
});

test("every example type-checks", () => {
  const files = EXAMPLES.map((code, n) => {
    const path = join(dir, `example${n}.ts`);
    writeFileSync(path, `export {};\n${resolved(code, join(PACKAGE, "src") + "/", ".js")}`);
    return path;
  });
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"],
    typeRoots: [join(PACKAGE, "node_modules", "@types")],
  });
  const problems = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line}` : "";
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
  assert.deepEqual(problems, []);
});

test("every example runs against a real server", () => {
  EXAMPLES.forEach((code, n) => {
    const js = ts.transpileModule(resolved(code, pathToFileURL(BUILT).href, ".js"), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022 },
    }).outputText;
    const path = join(dir, `example${n}.mjs`);
    writeFileSync(path, js);
    const run = spawnSync(process.execPath, [path], {
      env: { ...process.env, MEMSTACK_BASE_URL: server.baseUrl },
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(run.status, 0, `example ${n + 1} failed:\n${code}\n${run.stderr}`);
  });
});
