// Where the Python side of memstack is: the interpreter and the environment that runs the
// repository's own code (used by generate.mjs and by the tests, which start `memstack serve`).

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository holding this package: the nearest folder above with pyproject.toml and src/memstack. */
export function repoRoot(from = dirname(fileURLToPath(import.meta.url))) {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "pyproject.toml")) && existsSync(join(dir, "src", "memstack"))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/** The Python that runs memstack: $MEMSTACK_PYTHON, else the repository's .venv, else python3. */
export function pythonCommand(env = process.env) {
  if (env.MEMSTACK_PYTHON) return env.MEMSTACK_PYTHON;
  const root = repoRoot();
  const venv = root === null ? null : join(root, ".venv", "bin", "python");
  return venv !== null && existsSync(venv) ? venv : "python3";
}

/** `env` with the repository's src/ first on PYTHONPATH, so Python runs the code next to this package. */
export function pythonEnv(env = process.env) {
  const root = repoRoot();
  if (root === null) return { ...env };
  const src = join(root, "src");
  return { ...env, PYTHONPATH: env.PYTHONPATH ? `${src}:${env.PYTHONPATH}` : src };
}
