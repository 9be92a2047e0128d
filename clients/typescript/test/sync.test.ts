// The committed types match the server's OpenAPI document, and the check fails when they do not.

import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { PYTHON, env } from "./_server.js";

const GENERATE = fileURLToPath(new URL("../../scripts/generate.mjs", import.meta.url));
let dir: string;
let document: any;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "memstack-ts-sync-"));
  const run = spawnSync(PYTHON, ["-m", "memstack.doors.server.openapi"], { env: env(), encoding: "utf8", maxBuffer: 1 << 26 });
  assert.equal(run.status, 0, run.stderr);
  document = JSON.parse(run.stdout);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Run the check on `doc` (the server's own document when null): its exit status and output. */
function check(doc: unknown | null): { status: number | null; output: string } {
  const args = [GENERATE, "--check"];
  if (doc !== null) {
    const path = join(dir, `openapi-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(doc));
    args.push("--openapi", path);
  }
  const run = spawnSync(process.execPath, args, { env: env(), encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

test("the committed types are what the server's document gives", () => {
  const { status, output } = check(null);
  assert.equal(status, 0, output);
  assert.equal(check(document).status, 0);
});

test("a route's request schema changed without regenerating fails the check", () => {
  const changed = structuredClone(document);
  const body = changed.paths["/v1/sessions/{session_id}/keys/{key}"].put.requestBody.content["application/json"].schema;
  body.properties.priority = { type: "integer", description: "A field the committed types lack." };
  body.required = [...(body.required ?? []), "priority"];
  const { status, output } = check(changed);
  assert.equal(status, 1);
  assert.match(output, /openapi\.ts: differs/);
  assert.match(output, /npm run generate/);
});

test("a new route, a changed result and a new error each fail the check", () => {
  const route = structuredClone(document);
  route.paths["/v1/sessions/{session_id}/rename"] = {
    post: { ...route.paths["/v1/sessions/{session_id}"].get, operationId: "sessions_rename" },
  };
  assert.match(check(route).output, /operations\.ts: differs/);

  const result = structuredClone(document);
  const page = result.components.schemas.Page;
  page.properties.total = { type: "integer" };
  page.required = [...page.required, "total"];
  assert.equal(check(result).status, 1);

  const error = structuredClone(document);
  error.components.schemas.Problem["x-memstack-errors"].push({
    name: "QuotaExceeded",
    parent: "LimitReached",
    status: 429,
    retry: false,
    doc: "An error the client does not know yet.",
  });
  const { status, output } = check(error);
  assert.equal(status, 1);
  assert.match(output, /problems\.ts: differs/);
});
