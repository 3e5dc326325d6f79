import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ANOMALY_KIND_NAMES,
  ANOMALY_KINDS,
  classifyRow,
  parseFlag,
} from "../../src/db/source/source-anomalies.ts";

const UUID = "0b9f6c1e-3a52-4d7e-9c1a-2f4b6d8e0a13";
const row = (id: string | null, ud: string | null = "false", ad: string | null = "false") => ({
  id,
  userDisabled: ud,
  adminDisabled: ad,
});

describe("classifyRow", () => {
  it("delivers a clean UUID row as valid with its flags and no anomaly", () => {
    assert.deepEqual(classifyRow(row(UUID, "true", "false"), "warn", 1), {
      identityId: UUID,
      userDisabled: true,
      adminDisabled: false,
      anomaly: null,
      anomalyDetail: null,
      valid: true,
    });
  });

  it("rejects a NULL id, an empty or blank id, control or bidi-control characters and an over-long id", () => {
    const cases: [string | null, string][] = [
      [null, "null_id"],
      ["", "empty_id"],
      ["   ", "empty_id"],
      [`${UUID}\n`, "control_chars_in_id"],
      [`a\u0000b`, "control_chars_in_id"],
      [`a\u001b[2Jb`, "control_chars_in_id"],
      [`a\u009bb`, "control_chars_in_id"],
      [`user\u202Efdp.exe`, "bidi_controls_in_id"],
      [`a\u2066b\u2069`, "bidi_controls_in_id"],
      ["x".repeat(257), "id_too_long"],
    ];
    for (const [id, kind] of cases) {
      const c = classifyRow(row(id, "true"), "accept", 1);
      assert.equal(c.anomaly, kind, `id ${JSON.stringify(id)}`);
      assert.equal(c.valid, false);
      assert.ok(c.anomalyDetail && c.anomalyDetail.length > 0);
    }
  });

  it("accepts an id of exactly 256 characters under the accept policy", () => {
    assert.equal(classifyRow(row("x".repeat(256)), "accept", 1).anomaly, null);
  });

  it("rejects every copy of a duplicated id and says how many rows share it", () => {
    const c = classifyRow(row(UUID, "true"), "warn", 3);
    assert.equal(c.anomaly, "duplicate_id");
    assert.equal(c.valid, false);
    assert.match(c.anomalyDetail ?? "", /3 rows/);
  });

  it("never guesses a NULL flag as false and names the NULL column", () => {
    const c = classifyRow(row(UUID, null, "true"), "warn", 1);
    assert.equal(c.anomaly, "null_flag");
    assert.equal(c.valid, false);
    assert.equal(c.userDisabled, null);
    assert.equal(c.adminDisabled, true);
    assert.match(c.anomalyDetail ?? "", /user_disabled is NULL/);
  });

  it("rejects a flag that is not a boolean and shows the value", () => {
    const c = classifyRow(row(UUID, "2", "false"), "warn", 1);
    assert.equal(c.anomaly, "invalid_flag");
    assert.equal(c.userDisabled, null);
    assert.match(c.anomalyDetail ?? "", /user_disabled is "2"/);
  });

  it("follows the non-UUID policy: accept silently, warn but keep, or reject", () => {
    const accept = classifyRow(row("legacy-42", "true"), "accept", 1);
    assert.equal(accept.anomaly, null);
    assert.equal(accept.valid, true);
    const warn = classifyRow(row("legacy-42", "true"), "warn", 1);
    assert.equal(warn.anomaly, "non_uuid_id");
    assert.equal(warn.valid, true);
    const reject = classifyRow(row("legacy-42", "true"), "reject", 1);
    assert.equal(reject.anomaly, "non_uuid_id");
    assert.equal(reject.valid, false);
  });

  it("treats an upper-case UUID as non-UUID and explains the case problem", () => {
    const c = classifyRow(row(UUID.toUpperCase()), "warn", 1);
    assert.equal(c.anomaly, "non_uuid_id");
    assert.match(c.anomalyDetail ?? "", /upper-case/);
  });

  it("reports the rejecting anomaly when a row also has a warning-level one", () => {
    assert.equal(classifyRow(row("legacy-1", null), "warn", 1).anomaly, "null_flag");
    assert.equal(classifyRow(row("legacy-1"), "warn", 2).anomaly, "duplicate_id");
  });

  it("has a human reason for every anomaly kind", () => {
    assert.ok(ANOMALY_KIND_NAMES.length >= 8);
    for (const kind of ANOMALY_KIND_NAMES) assert.ok(ANOMALY_KINDS[kind].reason.length > 20, kind);
  });
});

describe("parseFlag", () => {
  it("reads boolean, integer and text spellings the way PostgreSQL does", () => {
    for (const t of ["true", "t", "TRUE", " yes ", "y", "on", "1"])
      assert.equal(parseFlag(t), true, t);
    for (const f of ["false", "f", "No", "n", "off", "0"]) assert.equal(parseFlag(f), false, f);
  });

  it("keeps NULL as null and marks anything else as not a boolean", () => {
    assert.equal(parseFlag(null), null);
    for (const x of ["2", "", "maybe", "-1"]) assert.equal(parseFlag(x), undefined, x);
  });

  it("shows control and bidi characters of an id escaped in the anomaly's detail", () => {
    const c = classifyRow(row("x\u202Ey\u007f", "true"), "accept", 1);
    assert.equal(c.anomalyDetail, 'id is "x\\u202ey\\u007f"');
  });
});
