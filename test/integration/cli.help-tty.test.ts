import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { type CliResult, runCli } from "../helpers/cli.ts";
import { spawnInTty } from "../helpers/tty.ts";

/**
 * The words of a text. cliui sets a right-aligned `[default: …]` flush against the description
 * when the two exactly fill a line (no space between, nothing cut): separate them again.
 */
const words = (s: string) =>
  s
    .replace(/(?<=\S)\[(?=boolean|default|choices|required)/g, " [")
    .split(/\s+/)
    .filter(Boolean);

/** Help texts with long flags, env var names and examples (`--seed 7`, `--identities 100000`). */
const HELPS = [
  ["db", "seed", "--help"],
  ["apply", "--help"],
];

describe("--help in a terminal", () => {
  /** Each help off a terminal, wrapped at another width; the same for every terminal width. */
  const references = new Map<string, CliResult>();
  before(async () => {
    for (const args of HELPS) references.set(args.join(" "), await runCli(args));
  });

  for (const cols of [80, 120]) {
    it(`wraps at word boundaries within ${cols} columns`, async () => {
      for (const args of HELPS) {
        const reference = references.get(args.join(" ")) as CliResult;
        assert.equal(reference.code, 0, reference.stderr);
        const { code, output } = await spawnInTty(args, { cols }).done;
        assert.equal(code, 0, output);
        const lines = output.split("\n");
        const long = lines.filter((l) => l.length > cols);
        assert.deepEqual(long, [], `lines longer than ${cols} columns`);
        // A word cut in two would change the words (columns interleave them differently, so
        // their order may differ; the words themselves may not).
        assert.deepEqual(words(output).sort(), words(reference.stdout).sort(), args.join(" "));
      }
    });
  }
});
