/**
 * The constants of `src/contract/` against the project's copy of the published schema: a change
 * of the contract fails here first, naming the constant to update.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ACCEPTED_REASON_CODES,
  API_PATHS,
  CONTROL_TYPES,
  CREATABLE_CONTROL_TYPES,
  IDENTITY_PATHS,
  MAX_PAGE_SIZE,
  PREVIEW_REASON_CODES,
  publishedSchema,
  REASON_CODES,
  routeTemplate,
  SCOPES,
  SET_BY,
  schemaEnum,
  TOKEN_PATH,
} from "../../src/contract/index.ts";

const sorted = (v: readonly string[]) => [...v].sort();

describe("the contract constants match the published schema", () => {
  it("lists the control types, the creatable ones and the reason codes of the schema", () => {
    assert.deepEqual(sorted(CONTROL_TYPES), sorted(schemaEnum("IdentityControlType")));
    assert.deepEqual(
      sorted(CREATABLE_CONTROL_TYPES),
      sorted(schemaEnum("CreateIdentityControlRequestClientIdentityControlType")),
    );
    assert.deepEqual([...REASON_CODES], [...schemaEnum("IdentityControlReasonCode")]);
    for (const [preview, published] of Object.entries(PREVIEW_REASON_CODES)) {
      assert.ok(!REASON_CODES.includes(preview as never), `${preview} is not published`);
      assert.ok(REASON_CODES.includes(published), `${published} is published`);
      assert.ok(ACCEPTED_REASON_CODES.includes(preview as never));
    }
  });

  it("spells set_by as the schema does", () => {
    assert.deepEqual(sorted(Object.values(SET_BY)), sorted(schemaEnum("IdentityControlSetBy")));
  });

  it("names every OAuth scope the schema's operations require, and the identity paths it has", () => {
    const doc = publishedSchema();
    const required = new Set<string>();
    for (const item of Object.values(doc.paths) as Record<string, { security?: unknown[] }>[]) {
      for (const op of Object.values(item)) {
        for (const s of (op.security ?? []) as Record<string, string[]>[]) {
          for (const scope of s.OAuth2 ?? []) required.add(scope);
        }
      }
    }
    assert.deepEqual(sorted(Object.values(SCOPES)), sorted([...required]));
    for (const path of Object.values(IDENTITY_PATHS)) assert.ok(doc.paths[path], path);
  });

  it("holds every path of the schema, and no other, and the token path of its OAuth2 flow", () => {
    const doc = publishedSchema();
    assert.deepEqual(sorted([...API_PATHS]), sorted(Object.keys(doc.paths)));
    const flows = doc.components.securitySchemes.OAuth2.flows;
    const tokenUrl = String(flows.clientCredentials?.tokenUrl ?? "");
    assert.ok(tokenUrl.endsWith(TOKEN_PATH), `${tokenUrl} ends with ${TOKEN_PATH}`);
    assert.equal(routeTemplate(IDENTITY_PATHS.identity), "/v2/identity/identities/:id");
  });

  it("says the page size its listings document as their maximum (1000)", () => {
    const doc = publishedSchema();
    const maxima = Object.values(doc.paths).flatMap((item) =>
      Object.values(
        item as Record<string, { parameters?: { name: string; description?: string }[] }>,
      )
        .flatMap((op) => op.parameters ?? [])
        .filter((p) => p.name === "limit")
        .map((p) => /Maximum (\d+)/.exec(p.description ?? "")?.[1])
        .filter((m) => m !== undefined)
        .map(Number),
    );
    assert.ok(maxima.length > 0, "some listing documents its maximum");
    assert.ok(
      maxima.every((m) => m === MAX_PAGE_SIZE),
      `${maxima.join(", ")}`,
    );
  });

  it("keeps one list of reason codes: the 11 published, and the accepted ones are those plus the preview's spellings", () => {
    assert.equal(REASON_CODES.length, 11);
    assert.deepEqual(
      [...ACCEPTED_REASON_CODES],
      [...REASON_CODES, ...Object.keys(PREVIEW_REASON_CODES)],
    );
  });
});
