/**
 * Docs that run (issue 54): every `controls-migrate <command> --flag` that README.md and docs/
 * show, in their shell blocks, their inline code and their command tables, names a command the
 * CLI has and flags that command takes, as its own `--help` lists them (the options table
 * rendered). Renaming a flag in the options table, or in a document, fails this test.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { flagsInHelp } from "../../src/commands/usage-error.ts";
import { REPO_ROOT, runCli } from "../helpers/cli.ts";
import { type DocCommand, docCommands } from "../helpers/doc-commands.ts";

const DOCS = [
  "README.md",
  ...readdirSync(join(REPO_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

const shown: DocCommand[] = DOCS.flatMap((f) =>
  docCommands(readFileSync(join(REPO_ROOT, f), "utf8"), f),
);

/** Each command's flags, from its own --help: "" is the top level. */
async function flagsOf(commands: readonly string[]): Promise<Map<string, Set<string> | null>> {
  const helps = await Promise.all(
    commands.map((c) => runCli([...c.split(" ").filter(Boolean), "--help"])),
  );
  return new Map(
    commands.map((c, i) => {
      const r = helps[i]!;
      // A command the CLI does not have fails its --help (retired) or prints the top level's.
      const known = r.code === 0 && (c === "" || r.stdout.includes(`controls-migrate ${c}`));
      return [c, known ? new Set(flagsInHelp(r.stdout)) : null];
    }),
  );
}

describe("the commands the docs show", () => {
  it("are read from shell blocks across continued lines and placeholders, up to a comment, a pipe or a redirection", () => {
    const md = [
      "```sh",
      "controls-migrate revert <run-id> --resume <id> \\",
      "  --yes   # --not-a-flag",
      "X=$(controls-migrate apply --json | tail -n 1) && controls-migrate runs --limit 5 >out",
      "```",
      "```text",
      "controls-migrate plan --ignored",
      "```",
      "Inline: `controls-migrate db seed --identities 10`.",
    ].join("\n");
    const got = docCommands(md, "x.md").map((c) => [c.where, c.command, c.flags.join(",")]);
    assert.deepEqual(got, [
      ["x.md:2", "revert", "resume,yes"],
      ["x.md:4", "apply", "json"],
      ["x.md:4", "runs", "limit"],
      ["x.md:9", "db seed", "identities"],
    ]);
  });

  it("are found in README.md and every file of docs/ that shows one", () => {
    assert.ok(shown.length > 40, `${shown.length} command lines found`);
    for (const f of ["README.md", "docs/operating.md"]) {
      assert.ok(
        shown.some((c) => c.where.startsWith(`${f}:`)),
        `${f} shows controls-migrate commands`,
      );
    }
  });

  it("name commands the CLI has and flags each command takes, as its --help lists them", async () => {
    const flags = await flagsOf([...new Set(shown.map((c) => c.command))]);
    const wrong: string[] = [];
    for (const c of shown) {
      const known = flags.get(c.command);
      if (!known) {
        wrong.push(`${c.where}: "${c.command}" is not a controls-migrate command (${c.text})`);
        continue;
      }
      for (const flag of c.flags) {
        const name = known.has(flag) ? flag : flag.replace(/^no-/, "");
        if (!known.has(name)) {
          wrong.push(`${c.where}: ${c.command} has no --${flag} (${c.text})`);
        }
      }
    }
    assert.deepEqual(wrong, [], wrong.join("\n"));
  });
});
