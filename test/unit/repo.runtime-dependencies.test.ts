/**
 * The CLI's runtime dependencies are exactly what its shipped code (`src/`, `migrations/`)
 * imports: nothing the sandbox alone needs (fastify, ajv), and no import the npm registry would
 * not install from `dependencies`. Read with the TypeScript pre-processor, as the import rules are.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";
import { ROOT } from "../helpers/import-graph.ts";

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (path.endsWith(".ts")) yield path;
  }
}

/** "@scope/name/sub" → "@scope/name"; "name/sub" → "name". */
const packageOf = (spec: string) =>
  spec
    .split("/")
    .slice(0, spec.startsWith("@") ? 2 : 1)
    .join("/");

function importedPackages(): Set<string> {
  const found = new Set<string>();
  for (const folder of ["src", "migrations"]) {
    for (const file of sourceFiles(join(ROOT, folder))) {
      const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
      for (const { fileName } of info.importedFiles) {
        if (!fileName.startsWith(".") && !fileName.startsWith("node:")) {
          found.add(packageOf(fileName));
        }
      }
    }
  }
  return found;
}

describe("the CLI's runtime dependencies", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const declared = Object.keys(manifest.dependencies).sort();

  it("are exactly the packages src/ and migrations/ import", () => {
    const imported = [...importedPackages()].sort();
    assert.ok(imported.length > 5, imported.join(", "));
    assert.deepEqual(declared, imported);
  });

  it("hold none of the sandbox's: no fastify, ajv, ajv-formats, no workspace package", () => {
    for (const name of ["fastify", "ajv", "ajv-formats", "controls-sandbox"]) {
      assert.equal(declared.includes(name), false, name);
    }
  });
});
