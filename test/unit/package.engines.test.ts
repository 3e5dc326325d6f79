import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import semver from "semver";
import { REPO_ROOT } from "../helpers/cli.ts";

const read = (file: string) => JSON.parse(readFileSync(join(REPO_ROOT, file), "utf8"));

describe("installed packages", () => {
  it("all run on the oldest Node our engines field allows, so npm ci warns of no EBADENGINE", () => {
    const oldest = semver.minVersion(read("package.json").engines.node);
    assert.ok(oldest, "engines.node is a valid range");
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(read("package-lock.json").packages) as [
      string,
      { version?: string; engines?: { node?: string } | string[] },
    ][]) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (path && range && !semver.satisfies(oldest, range)) {
        refused.push(`${path}@${entry.version} wants node ${range}`);
      }
    }
    assert.deepEqual(refused, [], `packages refusing Node ${oldest}`);
  });
});
