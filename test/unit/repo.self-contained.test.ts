/**
 * A bare clone must build and test with nothing beside it: no file of the project may reach the
 * workspace's shared folder (the published schema is copied into `schema/`, see its README).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SCANNED = ["src", "test", "migrations", "package.json"];
// Built from pieces so that this file does not match itself.
const PARENT_SHARED = new RegExp(`\\.\\.[\\\\/]+${"shared"}\\b`);
const SHARED_REFERENCE = new RegExp(`${"shared"}[\\\\/]reference`);

function* files(path: string): Generator<string> {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path)) {
      if (entry === "node_modules") continue;
      yield* files(join(path, entry));
    }
  } else yield path;
}

/** Every `file:line` of the scanned tree whose text points at the shared folder. */
export function referencesToShared(root: string): string[] {
  const hits: string[] = [];
  for (const top of SCANNED) {
    for (const file of files(join(root, top))) {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, i) => {
        if (PARENT_SHARED.test(line) || SHARED_REFERENCE.test(line)) {
          hits.push(`${relative(root, file)}:${i + 1}: ${line.trim().slice(0, 120)}`);
        }
      });
    }
  }
  return hits;
}

describe("the repository is self-contained", () => {
  it("has no file in src/, test/, migrations/ or package.json that reads the workspace's shared folder", () => {
    const hits = referencesToShared(ROOT);
    assert.deepEqual(hits, [], `files reaching outside the repository:\n${hits.join("\n")}`);
  });

  it("keeps its own copy of every schema the tests read", () => {
    for (const name of [
      "platform-v2.openapi.json",
      "platform-v2.conformance.openapi.json",
      "identity-controls.openapi.json",
    ]) {
      const spec = JSON.parse(readFileSync(join(ROOT, "schema", name), "utf8"));
      assert.equal(typeof spec.openapi, "string", `${name} is an OpenAPI document`);
    }
  });
});
