import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createLogger, type LogFormat } from "../../src/log.ts";
import { connectionSecrets } from "../../src/secret.ts";

const CLIENT_SECRET = 'cl1ent-"secret"\\with-quotes';
const BEARER = "eyJhbGciOiJIUzI1NiJ9.bearer-token-value.sig";
const DB_URL = "postgres://app:Db-Pass%2Fw0rd@db.internal:5432/app?sslmode=require";
const DB_PASSWORD = "Db-Pass/w0rd";

/** A logger of the given format that writes into an array, with the three secrets registered. */
function capture(format: LogFormat) {
  const lines: string[] = [];
  const logger = createLogger({
    level: "debug",
    format,
    write: (l) => lines.push(l),
    context: () => ({ run_id: "20260101-000000-abcd" }),
  });
  logger.addSecret(CLIENT_SECRET);
  logger.addSecret(BEARER);
  for (const s of connectionSecrets(DB_URL)) logger.addSecret(s);
  return { lines, logger };
}

/** Everything a careless caller could hand the logger. */
function leakEverything(logger: ReturnType<typeof capture>["logger"]) {
  logger.error(`token endpoint said: bad client_secret ${CLIENT_SECRET}`);
  logger.warn(`PostgreSQL connection lost: ${DB_URL}`, { url: DB_URL });
  logger.info("request", {
    headers: { authorization: `Bearer ${BEARER}` },
    nested: [{ secret: CLIENT_SECRET, password: DB_PASSWORD }],
  });
  logger.debug(`retrying with Bearer ${BEARER}`, { findings: { in_sync: 3 } });
}

const forbidden = [
  CLIENT_SECRET,
  JSON.stringify(CLIENT_SECRET).slice(1, -1),
  BEARER,
  DB_PASSWORD,
  "Db-Pass%2Fw0rd",
];

describe("createLogger", () => {
  it("writes one JSON object a line with level, time, message, run id and the fields, and redacts every secret", () => {
    const { lines, logger } = capture("json");
    leakEverything(logger);
    assert.equal(lines.length, 4);
    const objects = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      objects.map((o) => o.level),
      ["error", "warn", "info", "debug"],
    );
    for (const o of objects) {
      assert.match(String(o.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(typeof o.message, "string");
      assert.equal(o.run_id, "20260101-000000-abcd");
    }
    assert.deepEqual(objects[3]?.findings, { in_sync: 3 });
    assert.equal(objects[0]?.message, "token endpoint said: bad client_secret [redacted]");
    assert.deepEqual(objects[2]?.headers, { authorization: "Bearer [redacted]" });
    const text = lines.join("\n");
    for (const secret of forbidden) assert.ok(!text.includes(secret), `leaked ${secret}`);
  });

  it("redacts the same secrets in the default text format, which stays one plain line per event", () => {
    const { lines, logger } = capture("text");
    leakEverything(logger);
    assert.equal(lines.length, 4);
    assert.match(
      lines[0] ?? "",
      /^\S+Z ERROR token endpoint said: bad client_secret \[redacted\]$/,
    );
    assert.ok(!(lines[0] ?? "").includes("run_id"));
    const text = lines.join("\n");
    for (const secret of forbidden) assert.ok(!text.includes(secret), `leaked ${secret}`);
  });

  it("drops lines below the level in JSON as in text", () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "warn", format: "json", write: (l) => lines.push(l) });
    logger.info("hidden");
    logger.debug("hidden");
    logger.warn("shown");
    assert.deepEqual(
      lines.map((l) => JSON.parse(l).message),
      ["shown"],
    );
  });
});
