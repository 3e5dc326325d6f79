import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { COMMAND_EXIT_CODES } from "../../src/commands/exit-codes.ts";
import { commandEntries, commandName } from "../../src/commands/index.ts";
import { runCli } from "../helpers/cli.ts";

/** The codes a help text's "Exit codes:" paragraph names, in order. */
function codesIn(help: string): number[] {
  const paragraph = (help.split(/^Exit codes: /m)[1] ?? "").split(/\n\n|\nDocs:/)[0] ?? "";
  return [...paragraph.replace(/\n/g, " ").matchAll(/(?:^|, )(\d+) /g)].map((m) => Number(m[1]));
}

describe("exit codes in --help", () => {
  it("every command has its exit codes written, db's commands by both words", () => {
    const written = Object.keys(COMMAND_EXIT_CODES);
    for (const e of commandEntries) {
      const name = commandName(e);
      if (name === "db") assert.ok(written.includes("db migrate") && written.includes("db seed"));
      else assert.ok(written.includes(name), `${name} has no exit codes written`);
    }
  });

  it("each command's --help lists every exit code it can return, 1 and 130 included", async () => {
    const names = Object.keys(COMMAND_EXIT_CODES);
    const helps = await Promise.all(names.map((n) => runCli([...n.split(" "), "--help"])));
    names.forEach((name, i) => {
      const r = helps[i]!;
      assert.equal(r.code, 0, `${name} --help: ${r.stderr}`);
      const expected = COMMAND_EXIT_CODES[name]!.map(([code]) => code);
      assert.deepEqual(codesIn(r.stdout), expected, `${name} --help`);
      assert.ok(expected.includes(1) && expected.includes(130), name);
    });
    const plan = COMMAND_EXIT_CODES.plan!.map(([c]) => c);
    assert.deepEqual(plan, [0, 1, 2, 3, 4, 130]);
  });

  it("the top-level --help lists every exit code once and the version flag on one line", async () => {
    const r = await runCli(["--help"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(codesIn(r.stdout), [0, 1, 2, 3, 4, 130]);
    assert.equal(r.stdout.match(/--version/g)?.length, 2, "the option's line and the command's");
    assert.match(r.stdout, /^ {2}-v, --version {2}/m);
    assert.doesNotMatch(r.stdout, /-V\b/);
  });

  it("a retired command's --help says where it went and exits 1, as the command itself does", async () => {
    for (const name of ["sandbox", "demo"]) {
      const r = await runCli([name, "--help"]);
      assert.equal(r.code, 1, `${name} --help: ${r.stdout}`);
      assert.match(r.stderr, new RegExp(`^Error: ${name} is no longer a controls-migrate command`));
      assert.doesNotMatch(r.stdout, /Commands:/);
    }
  });
});
