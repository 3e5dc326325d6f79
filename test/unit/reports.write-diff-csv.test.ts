import assert from "node:assert/strict";
import { lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { stringify } from "csv-stringify";
import {
  CSV_CAST,
  DIFF_COLUMNS,
  type DiffRow,
  neutraliseCell,
  writeDiffCsv,
} from "../../src/reports/csv.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const row = (over: Partial<DiffRow>): DiffRow =>
  Object.fromEntries(DIFF_COLUMNS.map((c) => [c, over[c] ?? null])) as DiffRow;

describe("writeDiffCsv", () => {
  it("writes exactly the documented header", async () => {
    const file = join(tempDir("cm-csv-"), "diff.csv");
    await writeDiffCsv(file, (async function* () {})());
    assert.equal(
      readFileSync(file, "utf8").trim(),
      "run_id,identity_id,user_disabled,admin_disabled,platform_user_disabled,platform_admin_disabled,finding,expected_type,expected_set_by,expected_is_overridable,observed_control_id,observed_set_by,observed_is_overridable,other_active_controls,action,outcome,http_status,error,attempts,at",
    );
  });

  it("writes 2,345 rows across its thousand-row chunks byte for byte as csv-stringify's stream writes them one by one", async () => {
    const at = new Date("2026-11-30T01:02:03.456Z");
    const rows = Array.from({ length: 2345 }, (_, i) =>
      row({
        run_id: "r1",
        identity_id: i % 7 === 0 ? `=id,${i}` : `id "${i}"\n`,
        user_disabled: i % 2 === 0,
        http_status: i % 3 === 0 ? 404 : null,
        at: i % 5 === 0 ? at : null,
      }),
    );
    const file = join(tempDir("cm-csv-"), "diff.csv");
    const n = await writeDiffCsv(
      file,
      (async function* () {
        yield* rows;
      })(),
    );
    assert.equal(n, 2345);
    const reference = stringify({ header: true, columns: [...DIFF_COLUMNS], cast: CSV_CAST });
    let expected = "";
    reference.on("data", (d) => {
      expected += d;
    });
    const ended = new Promise((resolve) => reference.on("end", resolve));
    for (const r of rows) reference.write(r);
    reference.end();
    await ended;
    const text = readFileSync(file, "utf8");
    assert.equal(text.split("\n").length, 2345 + 2, "header, rows, final newline");
    assert.equal(text, expected);
  });

  it("neutralises spreadsheet formulas in every text cell", async () => {
    const file = join(tempDir("cm-csv-"), "diff.csv");
    const evil = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2", "@SUM(A1)", "\tx", "\rx"];
    const n = await writeDiffCsv(
      file,
      (async function* () {
        for (const id of evil)
          yield row({ run_id: "r1", identity_id: id, finding: "invalid_source_row", error: id });
      })(),
    );
    assert.equal(n, evil.length);
    const text = readFileSync(file, "utf8");
    for (const id of evil)
      assert.ok(!text.includes(`,${id},`), `unneutralised ${JSON.stringify(id)}`);
    assert.ok(text.includes(`'=HYPERLINK(""http://evil.example"",""x"")`));
  });

  it("writes booleans as true/false, dates as ISO-8601 and nulls as empty cells", async () => {
    const file = join(tempDir("cm-csv-"), "diff.csv");
    const at = new Date("2026-01-02T03:04:05.000Z");
    await writeDiffCsv(
      file,
      (async function* () {
        yield row({
          run_id: "r",
          identity_id: "i",
          user_disabled: true,
          admin_disabled: false,
          platform_user_disabled: false,
          http_status: 201,
          attempts: 1,
          at,
        });
      })(),
    );
    const line = readFileSync(file, "utf8").split("\n")[1];
    assert.equal(line, "r,i,true,false,false,,,,,,,,,,,,201,,1,2026-01-02T03:04:05.000Z");
  });

  it("prefixes an apostrophe to a cell whose formula sign follows leading whitespace or is the fullwidth form of = + - @", () => {
    const cells = [
      " =1+1",
      "  +1",
      "\u00a0-1",
      "\u3000@SUM(A1)",
      "＝1+1",
      "＋1",
      "－1",
      "＠SUM(A1)",
      " ＝1",
    ];
    for (const cell of cells) assert.equal(neutraliseCell(cell), `'${cell}`, JSON.stringify(cell));
  });

  it("leaves a cell alone when = + - @ appear only after its first visible character", () => {
    for (const cell of ["a=1", "1+1", " a-b", "x＠y"]) assert.equal(neutraliseCell(cell), cell);
  });

  it("keeps ordinary ids untouched", () => {
    assert.equal(
      neutraliseCell("4f1c2d9e-0000-4000-8000-000000000000"),
      "4f1c2d9e-0000-4000-8000-000000000000",
    );
  });

  it("escapes ESC, BEL, DEL, C1 and bidi-override characters visibly in every text cell", async () => {
    const file = join(tempDir("cm-csv-"), "diff.csv");
    const id = "a\u001b[31mb\u0007c\u007fd\u009be\u202Ef\u2066g";
    await writeDiffCsv(
      file,
      (async function* () {
        yield row({ run_id: "r1", identity_id: id, finding: "invalid_source_row", error: id });
      })(),
    );
    const text = readFileSync(file, "utf8");
    assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]|\p{Bidi_Control}/u);
    assert.equal(
      text.split("\n")[1]?.split(",")[1],
      "a\\u001b[31mb\\u0007c\\u007fd\\u009be\\u202ef\\u2066g",
    );
  });

  it("replaces a symbolic link planted under the file's name instead of writing through it", async () => {
    const dir = tempDir("cm-csv-");
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "precious");
    symlinkSync(victim, join(dir, "diff.csv"));
    await writeDiffCsv(
      join(dir, "diff.csv"),
      (async function* () {
        yield row({ run_id: "r1", identity_id: "x", finding: "in_sync" });
      })(),
    );
    assert.equal(readFileSync(victim, "utf8"), "precious");
    assert.ok(lstatSync(join(dir, "diff.csv")).isFile(), "diff.csv is a plain file now");
    assert.match(readFileSync(join(dir, "diff.csv"), "utf8"), /^run_id,/);
    assert.deepEqual(readdirSync(dir).sort(), ["diff.csv", "victim.txt"], "no temporary file left");
  });
});
