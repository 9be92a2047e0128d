// Every TypeScript block of the repository's README and of docs/ type-checks and runs against a real
// server, as the package's own README examples do (readme.test.ts). A block marked
// `<!-- test: needs memstack.Memory.remember -->` runs once the client has that method (`remember`),
// and is skipped, saying so, before.

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import ts from "typescript";
import { Memstack } from "../src/index.js";
import { resolved, serve, type Served } from "./_server.js";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));
const REPO = join(PACKAGE, "..", "..");
const BUILT = fileURLToPath(new URL("../src/", import.meta.url));

interface Block {
  name: string;
  code: string;
  skip: string | null;
}

function pages(): string[] {
  const docs = join(REPO, "docs");
  const found = [join(REPO, "README.md")];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) found.push(path);
    }
  };
  walk(docs);
  return found;
}

/** Why a block does not run now: a `skip:` mark, or a `needs` mark naming a method the client lacks. */
function skipReason(marks: string[]): string | null {
  const client = new Memstack({ baseUrl: "http://127.0.0.1:1" }) as unknown as Record<string, unknown>;
  for (const mark of marks) {
    if (mark.startsWith("skip:")) return mark.slice(5).trim();
    if (mark.startsWith("needs ")) {
      const method = mark.slice(6).trim().split(".").pop() as string;
      if (typeof client[method] !== "function") return `the client has no ${method}() yet (the example runs once it has)`;
    }
  }
  return null;
}

const BLOCKS: Block[] = pages().flatMap((path) => {
  const text = readFileSync(path, "utf8");
  return [...text.matchAll(/((?:<!-- test: [^\n]*-->\n)*)```ts\n([\s\S]*?)^```$/gm)].map((m) => {
    const marks = [...(m[1] as string).matchAll(/<!-- test: (.*?) -->/g)].map((x) => x[1] as string);
    const line = text.slice(0, m.index).split("\n").length + marks.length;
    return { name: `${relative(REPO, path)}:${line}`, code: m[2] as string, skip: skipReason(marks) };
  });
});

let server: Served;
let dir: string;

before(async () => {
  server = await serve();
  dir = mkdtempSync(join(tmpdir(), "memstack-ts-docs-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await server.stop();
});

test("the README shows the memory loop in TypeScript", () => {
  assert.ok(BLOCKS.some((b) => b.name.startsWith("README.md") && b.code.includes("remember")));
});

for (const block of BLOCKS) {
  test(`${block.name} type-checks and runs`, { skip: block.skip ?? false }, () => {
    const path = join(dir, `${block.name.replace(/[^A-Za-z0-9]/g, "_")}.ts`);
    writeFileSync(path, `export {};\n${resolved(block.code, join(PACKAGE, "src") + "/", ".js")}`);
    const program = ts.createProgram([path], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"],
      typeRoots: [join(PACKAGE, "node_modules", "@types")],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    assert.deepEqual(problems, []);
    const js = ts.transpileModule(resolved(block.code, pathToFileURL(BUILT).href, ".js"), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022 },
    }).outputText;
    const script = path.replace(/\.ts$/, ".mjs");
    writeFileSync(script, js);
    const run = spawnSync(process.execPath, [script], {
      env: { ...process.env, MEMSTACK_BASE_URL: server.baseUrl },
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(run.status, 0, `${block.name} failed:\n${block.code}\n${run.stderr}`);
  });
}
