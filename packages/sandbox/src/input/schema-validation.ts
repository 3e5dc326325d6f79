/**
 * Request validation generated from the published schema: each route's querystring, path and body
 * JSON schemas are built from its OpenAPI operation (parameters and request body, $refs inlined),
 * so enums, types, formats and required fields cannot drift from the contract. Fastify compiles
 * them; {@link formatSchemaError} turns the first failure into a problem detail that names the
 * parameter or field. The routes keep their own checks for what the schema does not say (limit
 * ranges, unknown parameters, decimals, metadata sizes, the platform's rules).
 */
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import type { FastifySchema, FastifySchemaCompiler } from "fastify";
import { PREVIEW_REASON_CODES, publishedSchema } from "../shared.ts";
import { MAX_LIMIT } from "./query-params.ts";

// biome-ignore lint/suspicious/noExplicitAny: JSON schema fragments are walked generically
type Json = any;

/** JSON Schema keywords kept; descriptions, examples and OpenAPI-only keywords are dropped. */
const KEPT = new Set([
  "type",
  "properties",
  "items",
  "required",
  "enum",
  "pattern",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "additionalProperties",
  "oneOf",
  "anyOf",
  "allOf",
  "format",
]);
/** Formats Fastify's validator knows; OpenAPI's int32 and decimal are descriptive only. */
const FORMATS = new Set(["date-time", "uri"]);

function inline(node: Json, components: Json, depth = 0): Json {
  if (depth > 32) throw new Error("the published schema nests $refs too deeply");
  if (Array.isArray(node)) return node.map((n) => inline(n, components, depth + 1));
  if (typeof node !== "object" || node === null) return node;
  if (typeof node.$ref === "string") {
    const name = node.$ref.replace("#/components/schemas/", "");
    return inline(components[name], components, depth + 1);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (!KEPT.has(k)) continue;
    if (k === "format" && !FORMATS.has(v as string)) continue;
    if (k === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(v as Json).map(([p, s]) => [p, inline(s, components, depth + 1)]),
      );
    } else out[k] = typeof v === "object" ? inline(v, components, depth + 1) : v;
  }
  return out;
}

/** The preview's reason codes stay accepted wherever the published enum of reason codes is used. */
function acceptPreviewReasonCodes(node: Json): void {
  if (typeof node !== "object" || node === null) return;
  if (Array.isArray(node.enum) && node.enum.includes("COMPLIANCE_INCOMPLETE")) {
    node.enum = [...node.enum, ...Object.keys(PREVIEW_REASON_CODES)];
  }
  for (const v of Object.values(node)) acceptPreviewReasonCodes(v);
}

const INTEGER_TEXT = "^[0-9]{1,10}$";

/**
 * A parameter's schema. Integers are checked as digit strings (coercion would let "1e3" pass as
 * 1000); `limit` carries the sandbox's page bounds, which the schema leaves open, for the detail.
 */
function paramSchema(param: Json, components: Json): Json {
  const schema = inline(param.schema, components);
  if (schema.type !== "integer") return schema;
  const bounded = param.name === "limit" || param.name === "pagination.limit";
  return {
    type: "string",
    pattern: INTEGER_TEXT,
    ...(bounded ? { minimum: 1, maximum: MAX_LIMIT } : {}),
  };
}

/** "/v2/identity/identities/:id" → "/v2/identity/identities/{id}". */
const openApiPath = (route: string) => route.replace(/:([A-Za-z_]+)/g, "{$1}");

/**
 * Fastify's `querystring`, `params` and `body` schemas for one operation of the published schema.
 *
 * @example
 *   app.get(IDENTITIES_PATH, { schema: { ...operationSchema("GET", IDENTITIES_PATH) } }, handler);
 */
export function operationSchema(method: string, route: string): FastifySchema {
  const doc = publishedSchema();
  const op = doc.paths?.[openApiPath(route)]?.[method.toLowerCase()];
  if (!op) throw new Error(`the published schema has no operation ${method} ${route}`);
  const components = doc.components?.schemas ?? {};
  const out: FastifySchema = {};
  for (const where of ["query", "path"] as const) {
    const params = (op.parameters ?? []).filter((p: Json) => p.in === where);
    if (params.length === 0) continue;
    const schema: Json = {
      type: "object",
      properties: Object.fromEntries(params.map((p: Json) => [p.name, paramSchema(p, components)])),
      required: params.filter((p: Json) => p.required).map((p: Json) => p.name),
    };
    acceptPreviewReasonCodes(schema);
    if (where === "query") out.querystring = schema;
    else out.params = schema;
  }
  const body = op.requestBody?.content?.["application/json"]?.schema;
  if (body) {
    const schema = inline(body, components);
    acceptPreviewReasonCodes(schema);
    out.body = schema;
  }
  return out;
}

function ajvWith(coerceTypes: false | "array"): Ajv {
  // verbose: the failing value is kept in each error, so the detail can quote it.
  const ajv = new Ajv({ coerceTypes, allErrors: false, verbose: true, strict: false });
  addFormats.default(ajv, ["date-time", "uri"]);
  return ajv;
}

/**
 * Compiles route schemas: query strings and path parameters are text, so their values are coerced
 * to the schema's types (a single value to a one-item array); a JSON body is taken as sent, so
 * `"amount": 12.5` stays a number and is refused instead of becoming "12.5".
 *
 * Each schema is compiled on its route's first request: a sandbox serves a few of its routes in
 * most rehearsals and tests, and compiling all of them at start took about 0.2 s of CPU.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const ajvs: Partial<Record<"text" | "json", Ajv>> = {};
  const ajvFor = (kind: "text" | "json"): Ajv => {
    const found = ajvs[kind];
    if (found) return found;
    const made = ajvWith(kind === "json" ? false : "array");
    ajvs[kind] = made;
    return made;
  };
  return ({ schema, httpPart }) => {
    let validate: ReturnType<Ajv["compile"]> | undefined;
    return (data: unknown) => {
      if (!validate)
        validate = ajvFor(httpPart === "body" ? "json" : "text").compile(schema as object);
      return validate(data) ? { value: data } : { error: validate.errors as never };
    };
  };
}

interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  data?: unknown;
  parentSchema?: { minimum?: number; maximum?: number };
}

/** `limit must be an integer between 1 and 1000, got 5000`, for a bounded integer. */
function rangeDetail(name: string, e: SchemaError): string | undefined {
  const { minimum, maximum } = e.parentSchema ?? {};
  if (minimum === undefined || maximum === undefined) return undefined;
  const got = e.data === "" ? "an empty value" : String(e.data).slice(0, 40);
  return `${name} must be an integer between ${minimum} and ${maximum}, got ${got}`;
}

const shown = (v: unknown) => JSON.stringify(v)?.slice(0, 60) ?? String(v);

/**
 * The problem detail for a request the generated schema refused, naming the parameter or field:
 * `market must be one of ETHEUR, ..., got "MATICUSD"`, `the query parameter identity_id is
 * required`, `reason_code is required`.
 *
 * @example
 *   formatSchemaError([{ keyword: "enum", instancePath: "/side", params: { allowedValues: ["BUY", "SELL"] }, data: "X" }], "querystring");
 *   // 'side must be one of BUY, SELL, got "X"'
 */
export function formatSchemaError(errors: readonly SchemaError[], context: string): string {
  const e = errors[0];
  if (!e) return `the request ${context} is invalid`;
  const parts = e.instancePath.split("/").filter((p) => p !== "");
  const entry = parts.length > 1 && /^\d+$/.test(parts[parts.length - 1]!);
  const name = (entry ? parts.slice(0, -1) : parts).join(".");
  const where = context === "querystring" ? "query parameter" : "field";
  switch (e.keyword) {
    case "required":
      return context === "querystring"
        ? `the query parameter ${String(e.params.missingProperty)} is required`
        : `${name ? `${name}.` : ""}${String(e.params.missingProperty)} is required`;
    case "enum": {
      const allowed = (e.params.allowedValues as string[]).join(", ");
      return entry
        ? `${name} entries must be among ${allowed}, got ${shown(e.data)}`
        : `${name} must be one of ${allowed}, got ${shown(e.data)}`;
    }
    case "minimum":
    case "maximum":
      return rangeDetail(name, e) ?? `${name} ${e.message}, got ${shown(e.data)}`;
    case "type": {
      const type = String(e.params.type);
      if (name === "" && context === "body") return "the body must be a JSON object";
      if (type === "boolean") return `${name} must be true or false, got ${shown(e.data)}`;
      if (type === "integer") {
        return rangeDetail(name, e) ?? `${name} must be an integer, got ${shown(e.data)}`;
      }
      if (type === "object") return `${name} must be a JSON object, got ${shown(e.data)}`;
      if (type === "string" && typeof e.data === "number") {
        return `${name} must be a string, not a JSON number (a decimal goes as "12.5"): got ${e.data}`;
      }
      return `${name} must be a ${type}, got ${shown(e.data)}`;
    }
    case "format":
      return e.params.format === "date-time"
        ? `${name} must be an RFC 3339 date-time like 2006-01-02T15:04:05Z, got ${shown(e.data)}`
        : `${name} must be a ${String(e.params.format)}, got ${shown(e.data)}`;
    case "pattern":
      if (e.params.pattern === INTEGER_TEXT) {
        return rangeDetail(name, e) ?? `${name} must be an integer, got ${shown(e.data)}`;
      }
      return `${name} must match ${String(e.params.pattern)}, got ${shown(e.data)}`;
    default:
      return `${where} ${name || "(body)"} ${e.message ?? "is invalid"}`;
  }
}
