import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  commandEntries,
  commandName,
  commandsFor,
  loadAllCommands,
} from "../../src/commands/index.ts";

describe("the lazy command registry", () => {
  it("lists each command with the same command string and help line as its module", async () => {
    const modules = await loadAllCommands();
    assert.ok(modules.length > 0);
    assert.equal(modules.length, commandEntries.length);
    for (const [i, m] of modules.entries()) {
      assert.equal(commandEntries[i]!.command, m.command, `entry ${i}`);
      assert.equal(commandEntries[i]!.describe, m.describe, `${m.command}'s describe`);
    }
  });

  it("loads no command module for a command line that names no command (--help)", async () => {
    const modules = await commandsFor(["--help"]);
    assert.equal(modules.length, commandEntries.length);
    const loaded = modules.filter((m) => m.builder !== undefined);
    assert.deepEqual(loaded, []);
  });

  it("loads the named command's module only, and lists the others by their help line", async () => {
    const modules = await commandsFor(["--data-dir", "x", "status", "--json"]);
    const loaded = modules.filter((m) => m.builder !== undefined).map((m) => m.command);
    assert.deepEqual(loaded, ["status [run-id]"]);
    const names = modules.map((m) => String(m.command).split(" ")[0]);
    assert.deepEqual(names, commandEntries.map(commandName));
  });

  it("a listed-only command refuses to run rather than do nothing", async () => {
    const [plan] = await commandsFor([]);
    assert.throws(() => (plan!.handler as (a: unknown) => void)({}), /without its module loaded/);
  });
});
