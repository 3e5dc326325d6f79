import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  closestFlag,
  explainMissing,
  explainUnknown,
  flagsInHelp,
} from "../../src/commands/usage-error.ts";

describe("usage errors", () => {
  it("suggest the closest known flag for a mistyped one, and nothing for a far one", () => {
    const known = ["api-url", "token-url", "batch-size", "rate"];
    assert.equal(closestFlag("api-ur", known), "api-url");
    assert.equal(closestFlag("batchsize", known), "batch-size");
    assert.equal(closestFlag("completely-else", known), undefined);
  });

  it("suggest the known flag a typed one is the tail of, the shortest when several are", () => {
    const known = ["source-id-column", "source-user-disabled-column", "api-url", "token-url"];
    assert.equal(closestFlag("id-column", known), "source-id-column");
    assert.equal(closestFlag("user-disabled-column", known), "source-user-disabled-column");
    assert.equal(closestFlag("url", known), "api-url");
  });

  it("suggest the known flag whose tail a typed one is a typo away from, a prefix left off too", () => {
    const known = ["source-id-column", "source-user-disabled-column", "api-url"];
    assert.equal(closestFlag("id-colum", known), "source-id-column");
    assert.equal(closestFlag("user-disabled-colum", known), "source-user-disabled-column");
    assert.equal(closestFlag("colour-scheme", known), undefined);
  });

  it("name the flags a command does not take beside a missing required one, which yargs leaves unsaid", () => {
    const known = ["identities", "seed", "progress", "data-dir"];
    assert.equal(
      explainMissing(
        "Missing required argument: identities",
        ["db", "seed", "--identity-count", "10", "--no-progress", "--seed=7"],
        known,
      ),
      "Missing required argument: identities\nUnknown argument --identity-count. Did you mean --identities?",
    );
    assert.equal(
      explainMissing("Missing required argument: identities", ["--seed", "7"], known),
      undefined,
    );
  });

  it("tell a mistyped flag from a stray word", () => {
    const known = ["api-url"];
    assert.equal(
      explainUnknown("Unknown arguments: api-ur, stray", ["--api-ur", "x", "stray"], known),
      "Unknown argument --api-ur. Did you mean --api-url?\nUnknown argument stray.",
    );
    assert.equal(explainUnknown("Not enough arguments", [], known), undefined);
  });

  it("find the flags a help text lists", () => {
    const help = "Options:\n  --api-url  Base URL [env API_BASE_URL]\n  -h, --help  Show help";
    assert.deepEqual(flagsInHelp(help), ["api-url", "help"]);
  });
});
