import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT, runCli } from "../helpers/cli.ts";

const version = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version;

describe("command-line conventions", () => {
  it("--version and the version command print package.json's version", async () => {
    for (const args of [["--version"], ["version"]]) {
      const r = await runCli(args);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${version}\n`);
    }
  });

  it("no command prints the top-level help and exits 1", async () => {
    const r = await runCli([]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /Commands:[\s\S]*controls-migrate plan[\s\S]*controls-migrate discard[\s\S]*controls-migrate version/,
    );
    assert.match(r.stderr, /Name a command/);
  });

  it("db alone prints the help of db and its commands, and exits 1", async () => {
    const r = await runCli(["db"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /controls-migrate db migrate[\s\S]*controls-migrate db seed/);
    assert.doesNotMatch(r.stderr, /Not enough non-option arguments/);
  });

  it("a mistyped flag gets a suggestion of the flag that was meant", async () => {
    const r = await runCli(["plan", "--api-ur", "https://x.example"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Unknown argument --api-ur\. Did you mean --api-url\?/);
  });

  it("a flag typed without its prefix gets the prefixed flag suggested", async () => {
    const r = await runCli(["plan", "--id-column", "x"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Unknown argument --id-column\. Did you mean --source-id-column\?/);
  });

  it("refuses the retired sandbox and demo commands with exit 1, naming the repository's controls-sandbox bin and npm run demo", async () => {
    const [sandbox, demo] = await Promise.all([
      runCli(["sandbox", "--port", "0"]),
      runCli(["demo", "--identities", "10"]),
    ]);
    assert.equal(sandbox?.code, 1, sandbox?.stderr);
    assert.match(sandbox?.stderr ?? "", /npx controls-sandbox/);
    assert.match(sandbox?.stderr ?? "", /npm run sandbox:from-db/);
    assert.equal(demo?.code, 1, demo?.stderr);
    assert.match(demo?.stderr ?? "", /npm run demo/);
    assert.doesNotMatch(demo?.stderr ?? "", /Did you mean/);
  });

  it("every command's --help names each option by its flag and says what it does", async () => {
    const commands = [
      ["plan"],
      ["apply"],
      ["reconcile"],
      ["revert"],
      ["discard"],
      ["status"],
      ["pause"],
      ["continue"],
      ["set-rate"],
      ["runs"],
      ["report"],
      ["show"],
      ["db", "migrate"],
      ["db", "seed"],
    ];
    const helps = await Promise.all(commands.map((c) => runCli([...c, "--help"])));
    commands.forEach((command, i) => {
      const r = helps[i] as Awaited<ReturnType<typeof runCli>>;
      const name = command.join(" ");
      assert.equal(r.code, 0, `${name} --help: ${r.stderr}`);
      const sections = r.stdout.split(/^Examples:$/m)[0] ?? "";
      const options = sections.split("\n").filter((line) => /^ {2,8}--\S/.test(line));
      assert.ok(options.length > 0, `${name} --help lists options`);
      for (const line of options) {
        const [flag, ...rest] = line.trim().split(/\s{2,}/);
        assert.doesNotMatch(flag ?? "", /[A-Z]/, `${name} --help: ${flag} is not a flag's name`);
        assert.ok(rest.join(" ").trim().length > 0, `${name} --help: ${flag} has no description`);
      }
    });
  });

  it("completion prints a shell completion script for controls-migrate", async () => {
    const r = await runCli(["completion"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /controls-migrate --get-yargs-completions/);
  });

  it("with --json a command-line error still prints one JSON error object on stdout", async () => {
    const r = await runCli(["plan", "--json", "--bogus"]);
    assert.equal(r.code, 1);
    assert.deepEqual(JSON.parse(r.stdout), {
      error: { message: "Unknown argument --bogus.", exit_code: 1 },
    });
  });
});
