import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readTable } from "../../src/config/load.ts";
import {
  applyOptions,
  globalOptions,
  loadGlobalConfig,
  loadPipelineConfig,
  loadPlatformConfig,
  loadSourceConfig,
  type OptionTable,
  platformOptions,
  reconcileOptions,
  runOptions,
  sourceOptions,
  writeOptions,
  yargsOptions,
} from "../../src/config.ts";
import { UserError } from "../../src/errors.ts";

const platformEnv = {
  API_BASE_URL: "https://api.example.com",
  OAUTH_TOKEN_URL: "https://auth.example.com/oauth2/token",
  OAUTH_CLIENT_ID: "client-1",
  OAUTH_CLIENT_SECRET: "s3cret-value-xyz",
};

const tables: Record<string, OptionTable> = {
  globalOptions,
  sourceOptions,
  platformOptions,
  runOptions,
  writeOptions,
  applyOptions,
  reconcileOptions,
};

describe("the options table", () => {
  it("gives each option its default when neither flag nor env var is set", () => {
    for (const [name, table] of Object.entries(tables)) {
      const values = readTable(table, {}, {}, []);
      for (const [key, def] of Object.entries(table)) {
        assert.deepEqual(values[key], def.default, `${name}.${key}`);
      }
    }
  });

  it("reads each option's env var, and lets its flag win over it", () => {
    for (const table of Object.values(tables)) {
      for (const [key, def] of Object.entries(table)) {
        if (!def.env || def.kind !== "string" || def.choices || def.default === undefined) continue;
        const numeric = typeof def.default === "number";
        const envValue = numeric ? String(def.default) : `${def.default}-env`;
        const flagValue = numeric ? String(Number(def.default) + 1) : `${def.default}-flag`;
        const fromEnv = readTable(table, {}, { [def.env]: envValue }, []);
        const fromFlag = readTable(table, { [def.flag]: flagValue }, { [def.env]: envValue }, []);
        assert.equal(String(fromEnv[key]), envValue, def.env);
        assert.equal(String(fromFlag[key]), flagValue, def.flag);
      }
    }
  });

  it("uses every flag and env var name once", () => {
    const all = Object.values(tables).flatMap((t) => Object.values(t));
    const flags = all.map((d) => d.flag);
    const envs = all.flatMap((d) => (d.env ? [d.env] : []));
    assert.equal(new Set(flags).size, flags.length, "flags");
    assert.equal(new Set(envs).size, envs.length, "env vars");
  });

  it("gives yargs no defaults, so that env vars can sit between defaults and flags", () => {
    for (const table of Object.values(tables)) {
      for (const [flag, o] of Object.entries(yargsOptions(table))) {
        assert.equal(o.default, undefined, flag);
      }
    }
  });
});

describe("the config loaders", () => {
  it("say a batch size must be a whole number, naming the flag or the env var", () => {
    assert.throws(
      () => loadSourceConfig({ "batch-size": "abc" }, {}),
      (err: Error) =>
        err instanceof UserError &&
        err.message === '--batch-size must be a whole number, got "abc".',
    );
    assert.throws(
      () => loadSourceConfig({}, { CONTROLS_BATCH_SIZE: "1.5" }),
      (err: Error) => err.message === 'env CONTROLS_BATCH_SIZE must be a whole number, got "1.5".',
    );
  });

  it("name the allowed words when a choice is wrong", () => {
    assert.throws(
      () => loadGlobalConfig({}, { CONTROLS_LOG_LEVEL: "loud" }),
      /env CONTROLS_LOG_LEVEL must be one of error, warn, info, debug, got "loud"/,
    );
  });

  it("never read CONTROLS_YES or any env var as a confirmation", () => {
    const env = { CONTROLS_YES: "1", CONTROLS_CONFIRM: "yes", YES: "true" };
    assert.equal(loadPipelineConfig({}, env).yes, false);
    for (const def of Object.values(writeOptions)) {
      if (def.flag === "yes") assert.equal(def.env, undefined);
    }
  });

  it("turn flag text into typed values", () => {
    const p = loadPipelineConfig({ limit: "20", state: "bulk", yes: true });
    assert.deepEqual([p.limit, p.state, p.yes, p.prune], [20, "bulk", true, false]);
    const platform = loadPlatformConfig({ rate: "12.5", concurrency: "3" }, platformEnv);
    assert.deepEqual([platform.rate, platform.concurrency], [12.5, 3]);
  });

  it("take the last of a repeated flag", () => {
    assert.equal(loadSourceConfig({ "batch-size": ["10", "20"] }, {}).batchSize, 20);
  });
});
