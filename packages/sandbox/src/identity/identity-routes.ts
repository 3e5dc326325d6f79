import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { ProblemError } from "../gateway/problem.ts";
import { parseBool, parseLimit, type Query } from "../input/query-params.ts";
import { operationSchema } from "../input/schema-validation.ts";
import {
  checkOrderBy,
  enumListParam,
  enumParam,
  listingWalk,
  rejectUnknownParams,
  timeRange,
} from "../paging/listing-query.ts";
import { IDENTITIES_PATH, IDENTITY_PATH } from "../paths.ts";
import { SCOPES } from "../types.ts";
import { type IdentityFilter, pageIdentities } from "./identity-listing.ts";
import {
  createdAtOf,
  type SandboxStore,
  type StoredIdentity,
  updatedAtOf,
} from "./identity-store.ts";
import {
  CONTROL_TYPES,
  IDENTITY_STATUSES,
  IDENTITY_TYPES,
  PREVIEW_REASON_CODES,
  REASON_CODES,
} from "./types.ts";
import { identityListSchema, identitySchema } from "./wire-schemas.ts";

const bounds = (field: string) =>
  ({
    [`${field}.lt`]: "lt",
    [`${field}.lte`]: "lte",
    [`${field}.eq`]: "eq",
    [`${field}.gte`]: "gte",
    [`${field}.gt`]: "gt",
  }) as const;
const CREATED_AT = bounds("created_at");
const UPDATED_AT = bounds("updated_at");

const LISTING_PARAMS = [
  "summary_status",
  ...Object.keys(CREATED_AT),
  ...Object.keys(UPDATED_AT),
  "limit",
  "order",
  "order_by",
  "page_cursor",
  "identity_type",
  "control_types",
  "control_reason_codes",
];

/** An identity as the platform answers it, fields in the published schema's order. */
export function identityView(store: SandboxStore, i: StoredIdentity) {
  return {
    id: i.id,
    status_details: { active_controls: store.activeControls(i) },
    summary_status: i.summaryStatus,
    user_disabled: i.user_disabled,
    admin_disabled: i.admin_disabled,
    type: i.identityType,
    created_at: createdAtOf(i),
    updated_at: updatedAtOf(i),
  };
}

/** A repeated enum-valued filter (`control_types=SELL_ONLY&control_types=FROZEN`), deduplicated. */
function enumList(q: Query, name: string, values: readonly string[]): string[] {
  return [...new Set(enumListParam(q, name, values))].sort();
}

/** The listing's filters (a page_cursor is bound to them). */
function filterOf(q: Query): IdentityFilter {
  rejectUnknownParams(q, LISTING_PARAMS);
  const created = timeRange(q, CREATED_AT);
  const updated = timeRange(q, UPDATED_AT);
  const filter: IdentityFilter = {
    controlTypes: enumList(q, "control_types", CONTROL_TYPES),
    // The preview's name stands for the published one: one filter, one cursor fingerprint.
    reasonCodes: [
      ...new Set(
        enumList(q, "control_reason_codes", [
          ...REASON_CODES,
          ...Object.keys(PREVIEW_REASON_CODES),
        ]).map((r) => PREVIEW_REASON_CODES[r] ?? r),
      ),
    ].sort(),
    summaryStatus: enumParam(q, "summary_status", IDENTITY_STATUSES),
    identityType: enumParam(q, "identity_type", IDENTITY_TYPES),
    created: created.bounds,
    updated: Object.keys(updated.given).length > 0 ? updated.bounds : undefined,
  };
  // Bounds, not their spelling: 00:00:00Z and 00:00:00.000Z are the same filter.
  return filter;
}

/**
 * The identity reads: `GET /v2/identity/identities` with every published filter, and
 * `GET /v2/identity/identities/{id}`.
 *
 * The listing walks (created_at, id) in `order` (DESC unless asked, as published). Filters:
 * `control_types` and `control_reason_codes` (repeat the parameter; identities with an active
 * control of any listed type / reason code, through an index, never a scan of every identity; both
 * given: one active control must match both), `summary_status`, `identity_type`, and
 * `created_at.*` / `updated_at.*` (lt, lte, eq, gte, gt; RFC 3339). A page_cursor is bound to the
 * filters it was issued for (another filter set is a 400) and to its order; limit may change.
 * updated_at is the identity's last change that its `updatedAtPolicy` counts (`updated-at.ts`: a
 * control created or deleted, the platform's migration, a legacy field), else created_at.
 *
 * @example
 *   registerIdentityRoutes(app, ctx);
 */
export function registerIdentityRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { identities: store, cursors } = ctx;

  app.get(
    IDENTITIES_PATH,
    {
      config: { endpoint: IDENTITIES_PATH, scope: SCOPES.readIdentity },
      schema: { ...operationSchema("GET", IDENTITIES_PATH), response: { 200: identityListSchema } },
    },
    async (request) => {
      const q = request.query as Query;
      const filter = filterOf(q);
      const limit = parseLimit(q);
      checkOrderBy(q);
      const walk = listingWalk(cursors, q, "identities", filter);
      const page = pageIdentities(store, filter, walk.order, walk.after, limit);
      return {
        items: page.items.map((i) => identityView(store, i)),
        next_page_cursor: walk.nextCursor(page),
      };
    },
  );

  app.get(
    IDENTITY_PATH,
    {
      config: { endpoint: IDENTITY_PATH, scope: SCOPES.readIdentity },
      schema: { ...operationSchema("GET", IDENTITY_PATH), response: { 200: identitySchema } },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const q = request.query as Query;
      rejectUnknownParams(q, ["include_details", "include_institution_members"]);
      // Accepted as published; the sandbox holds no person or institution details to include.
      parseBool(q, "include_details", false);
      parseBool(q, "include_institution_members", false);
      const identity = store.get(id);
      if (!identity) throw new ProblemError(404, `identity ${id} not found`);
      return identityView(store, identity);
    },
  );
}
