/**
 * The platform's published v2 schema, read from the project's own copy in `schema/` (see its
 * README), so that enums and request validation come from the contract instead of hand-copied
 * lists. Read once, on first use; the package ships `schema/` beside `dist/`.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const PUBLISHED_SCHEMA_FILE = "platform-v2.openapi.json";
export const CONFORMANCE_SCHEMA_FILE = "platform-v2.conformance.openapi.json";

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document is walked by name
export type OpenApiDocument = any;

/**
 * The path of a file of `schema/`. The folder sits at the package root, two levels above this
 * module under `src/` and three under `dist/src/`, so the nearest one upwards is taken.
 *
 * @example
 *   schemaPath("platform-v2.openapi.json"); // "<package>/schema/platform-v2.openapi.json"
 */
export function schemaPath(file: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 5; up++) {
    const candidate = join(dir, "schema", file);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(
    `the published schema schema/${file} is missing from the package; reinstall controls-migrate`,
  );
}

const cache = new Map<string, OpenApiDocument>();

/** The parsed schema file (the published one by default), read once per process. */
export function publishedSchema(file = PUBLISHED_SCHEMA_FILE): OpenApiDocument {
  let doc = cache.get(file);
  if (!doc) {
    doc = JSON.parse(readFileSync(schemaPath(file), "utf8"));
    cache.set(file, doc);
  }
  return doc;
}

/**
 * The values of an enum among the schema's components, in the schema's order.
 *
 * @example
 *   schemaEnum("Market").includes("BTCUSD"); // true
 */
export function schemaEnum(component: string): readonly string[] {
  const values = publishedSchema().components?.schemas?.[component]?.enum;
  if (!Array.isArray(values) || !values.every((v) => typeof v === "string")) {
    throw new Error(`the published schema has no string enum named ${component}`);
  }
  return Object.freeze([...values]);
}
