/**
 * The settings a run is bound to (issue 26 §2): read back from the run's recorded options,
 * restored where a resume does not give them again, a new rate or concurrency reported as a
 * change, any other new value as a conflict naming both; and the `Resume with:` flags.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { resumeFlags, shellWord } from "../../src/commands/resume-settings.ts";
import {
  givenRunSettings,
  loadRunConfigs,
  RUN_SETTING_KEYS,
  RUN_SETTINGS,
  runSettingFlag,
} from "../../src/config.ts";
import { recordedSettings, restoreSettings } from "../../src/migration/run/run-settings.ts";

const ENV = {
  API_BASE_URL: "https://api.example.com",
  OAUTH_TOKEN_URL: "https://auth.example.com/token",
  OAUTH_CLIENT_ID: "c-1",
  OAUTH_CLIENT_SECRET: "s3cret-value",
};
const configs = (argv: Record<string, unknown> = {}) => loadRunConfigs(argv, ENV);

describe("a run's recorded settings", () => {
  it("reads every bound setting from the recorded options text and drops a value of the wrong type", () => {
    const text = JSON.stringify({
      rate: 5,
      concurrency: 3,
      state: "bulk",
      limit: 10,
      pauseOutside: "22:00-06:00",
      throttleFile: "t.flag",
      reason: "r",
      reasonCode: "OTHER",
      prune: "yes",
      api_url: "https://api.example.com",
    });
    assert.deepEqual(recordedSettings(text), {
      rate: 5,
      concurrency: 3,
      state: "bulk",
      limit: 10,
      pauseOutside: "22:00-06:00",
      throttleFile: "t.flag",
      reason: "r",
      reasonCode: "OTHER",
    });
  });

  it("restores the run's rate, concurrency, limit and reason when the resume does not give them", () => {
    const recorded = { rate: 5, concurrency: 2, limit: 7, reason: "why", prune: false };
    const r = restoreSettings(recorded, configs(), new Set());
    assert.equal(r.configs.platform.rate, 5);
    assert.equal(r.configs.platform.concurrency, 2);
    assert.equal(r.configs.pipeline.limit, 7);
    assert.equal(r.configs.pipeline.reason, "why");
    assert.equal(r.configs.platform.clientSecret.reveal(), "s3cret-value", "the secret is kept");
    assert.deepEqual(r.changes, []);
    assert.deepEqual(r.conflicts, []);
  });

  it("reports a rate and a concurrency given anew at resume as changes with both values", () => {
    const r = restoreSettings(
      { rate: 5, concurrency: 2 },
      configs({ rate: "20", concurrency: "4" }),
      new Set(["rate", "concurrency"] as const),
    );
    assert.equal(r.configs.platform.rate, 20);
    assert.deepEqual(r.changes, [
      { setting: "rate", flag: "--rate", was: 5, now: 20 },
      { setting: "concurrency", flag: "--concurrency", was: 2, now: 4 },
    ]);
    assert.deepEqual(r.conflicts, []);
  });

  it("refuses another --limit or --state given at resume, naming the run's value and the invocation's", () => {
    const r = restoreSettings(
      { limit: 3, state: "bulk" },
      configs({ limit: "9", state: "filtered" }),
      new Set(["limit", "state"] as const),
    );
    assert.deepEqual(r.conflicts, [
      `--state: the run's "bulk", this invocation's "filtered"`,
      "--limit: the run's 3, this invocation's 9",
    ]);
  });

  it("accepts a setting given again with the run's own value, and a --limit given to a run that had none is a conflict", () => {
    const same = restoreSettings({ rate: 5 }, configs({ rate: "5" }), new Set(["rate"] as const));
    assert.deepEqual([same.changes, same.conflicts], [[], []]);
    const added = restoreSettings(
      { rate: 5 },
      configs({ limit: "4" }),
      new Set(["limit"] as const),
    );
    assert.deepEqual(added.conflicts, ["--limit: the run's (none), this invocation's 4"]);
  });

  it("reads the run's wait for the platform back and restores it when the resume does not give it", () => {
    const text = JSON.stringify({ waitForPlatform: false, waitForPlatformS: 600 });
    assert.deepEqual(recordedSettings(text), { waitForPlatform: false, waitForPlatformS: 600 });
    const r = restoreSettings(recordedSettings(text), configs(), new Set());
    assert.equal(r.configs.pipeline.waitForPlatform, false);
    assert.equal(r.configs.pipeline.waitForPlatformS, 600);
    assert.deepEqual([r.changes, r.conflicts], [[], []]);
  });

  it("refuses --no-wait-for-platform or another --wait-for-platform-s at resume, naming the flag and both values", () => {
    const noWait = restoreSettings(
      { waitForPlatform: true },
      configs({ "wait-for-platform": false }),
      new Set(["waitForPlatform"] as const),
    );
    assert.deepEqual(noWait.conflicts, [
      "--wait-for-platform (--no-wait-for-platform): the run's true, this invocation's false",
    ]);
    const waitS = restoreSettings(
      { waitForPlatform: true, waitForPlatformS: 600 },
      configs({ "wait-for-platform-s": "60" }),
      new Set(["waitForPlatformS"] as const),
    );
    assert.deepEqual(waitS.conflicts, [
      "--wait-for-platform-s: the run's 600, this invocation's 60",
    ]);
    const added = restoreSettings(
      { waitForPlatform: true },
      configs({ "wait-for-platform-s": "60" }),
      new Set(["waitForPlatformS"] as const),
    );
    assert.deepEqual(added.conflicts, [
      "--wait-for-platform-s: the run's (none), this invocation's 60",
    ]);
    assert.deepEqual(noWait.changes, [], "not a change a resume may make, as --rate is");
  });

  it("keeps the invocation's wait for the platform when the run recorded none (an older version's run)", () => {
    const r = restoreSettings(
      { rate: 5 },
      configs({ "wait-for-platform": false }),
      new Set(["waitForPlatform"] as const),
    );
    assert.equal(r.configs.pipeline.waitForPlatform, false);
    assert.deepEqual(r.conflicts, []);
  });
});

describe("the Resume with: flags", () => {
  it("repeats connection flags given as flags, drops a database URL's password, and adds --yes when given", () => {
    const flags = resumeFlags(
      {
        "database-url": "postgres://ops:pw@db.internal:5432/app",
        "api-url": "https://api.example.com",
        out: "reports/run one",
        rate: "5",
        yes: true,
      },
      "apply",
    );
    assert.equal(
      flags,
      " --database-url postgres://ops@db.internal:5432/app --api-url https://api.example.com --out 'reports/run one' --yes",
    );
  });

  it("says how to add --yes, as a shell comment, when the run was confirmed at the prompt", () => {
    const flags = resumeFlags({ "data-dir": "d" }, "apply");
    assert.match(flags, /^ --data-dir d {2}# add --yes to confirm without the prompt/);
  });

  it("quotes a word with a single quote so that a shell reads it back unchanged", () => {
    assert.equal(shellWord("it's"), `'it'\\''s'`);
    assert.equal(shellWord("plain/path-1"), "plain/path-1");
  });
});

describe("the table of run settings", () => {
  it("names, for every setting, an option whose flag is read as given and a config that holds the setting under its key", () => {
    assert.ok(RUN_SETTING_KEYS.length >= 11, `${RUN_SETTING_KEYS.length} settings`);
    const loaded = configs();
    for (const key of RUN_SETTING_KEYS) {
      const setting = RUN_SETTINGS[key];
      const holder: Record<string, unknown> = { ...loaded[setting.in] };
      assert.ok(key in holder, `${key} is a key of configs.${setting.in}`);
      const value = setting.option.kind === "boolean" ? true : "1";
      assert.deepEqual([...givenRunSettings({ [setting.option.flag]: value }, {})], [key]);
      assert.match(runSettingFlag(key), new RegExp(`^--${setting.option.flag}\\b`));
    }
  });
});
