import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { connectionSecrets, postgresTarget, redactUrl } from "../../src/secret.ts";

describe("redactUrl", () => {
  it("masks the userinfo password and the password, sslpassword and sslkey parameters", () => {
    assert.equal(
      redactUrl(
        "postgres://app:pw1@db:5432/app?password=pw2&sslpassword=pw3&sslkey=key4&sslmode=require",
      ),
      "postgres://app:***@db:5432/app?password=***&sslpassword=***&sslkey=***&sslmode=require",
    );
  });

  it("masks parameters whatever their case and keeps the rest of the URL", () => {
    assert.equal(
      redactUrl("postgres://app@db/app?PassWord=x&application_name=cm"),
      "postgres://app@db/app?PassWord=***&application_name=cm",
    );
  });

  it("never echoes an unparseable URL", () => {
    assert.equal(redactUrl("postgres://app:pw@[nope/app"), "[unparseable url]");
  });
});

describe("connectionSecrets", () => {
  it("lists every credential the URL carries, decoded", () => {
    assert.deepEqual(connectionSecrets("postgres://app:p%40ss@db/app?password=q&sslkey=k"), [
      "p@ss",
      "p%40ss",
      "q",
      "k",
    ]);
  });
});

describe("postgresTarget", () => {
  it("gives host, port and database and nothing else", () => {
    assert.deepEqual(postgresTarget("postgres://app:pw@db.internal:6432/app?password=x"), {
      host: "db.internal",
      port: 6432,
      database: "app",
    });
    assert.deepEqual(postgresTarget("postgresql://app@db"), {
      host: "db",
      port: 5432,
      database: "app",
    });
  });
});
