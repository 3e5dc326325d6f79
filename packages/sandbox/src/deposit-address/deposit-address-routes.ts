import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { parseLimit, type Query } from "../input/query-params.ts";
import { operationSchema } from "../input/schema-validation.ts";
import {
  checkOrderBy,
  enumListParam,
  listingWalk,
  listParam,
  rejectUnknownParams,
  timeRange,
} from "../paging/listing-query.ts";
import { DEPOSIT_ADDRESSES_PATH } from "../paths.ts";
import { SCOPES } from "../types.ts";
import type { StoredAddress } from "./deposit-address-store.ts";
import { CRYPTO_NETWORKS } from "./types.ts";

const LIST_FILTERS = [
  "profile_ids",
  "identity_ids",
  "account_ids",
  "ids",
  "ref_ids",
  "networks",
] as const;
const TIME_FILTERS = {
  "created_at.lt": "lt",
  "created_at.lte": "lte",
  "created_at.eq": "eq",
  "created_at.gte": "gte",
  "created_at.gt": "gt",
} as const;
const PARAMS = [
  ...LIST_FILTERS,
  ...Object.keys(TIME_FILTERS),
  "limit",
  "order",
  "order_by",
  "page_cursor",
];

/** The field each list filter tests. */
const FIELD_OF = {
  profile_ids: "profile_id",
  identity_ids: "identity_id",
  account_ids: "account_id",
  ids: "id",
  ref_ids: "ref_id",
  networks: "crypto_network",
} as const;

/**
 * `GET /v2/transfer/deposit-addresses`: every address of the account, filtered and
 * keyset-paginated.
 *
 * Choices where the issue leaves room: list filters are given by repeating the parameter
 * (`ids=a&ids=b`), match any of their entries, and combine with every other filter by AND; an
 * address without identity_id (account_id, ref_id) never matches a filter on it; order defaults
 * to DESC (newest first), order_by takes only CREATED_AT; a page_cursor must come with the same
 * filters (in any entry order); there is no total_count; unknown parameters are a 400.
 *
 * @example
 *   registerDepositAddressRoutes(app, ctx);
 */
export function registerDepositAddressRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { addresses, cursors } = ctx;

  app.get(
    DEPOSIT_ADDRESSES_PATH,
    {
      config: { endpoint: DEPOSIT_ADDRESSES_PATH, scope: SCOPES.readDepositAddress },
      schema: operationSchema("GET", DEPOSIT_ADDRESSES_PATH),
    },
    async (request) => {
      const q = request.query as Query;
      rejectUnknownParams(q, PARAMS);
      const lists = LIST_FILTERS.map((name) => {
        const values =
          name === "networks" ? enumListParam(q, name, CRYPTO_NETWORKS) : listParam(q, name);
        return [name, values] as const;
      });
      const time = timeRange(q, TIME_FILTERS);
      const limit = parseLimit(q);
      checkOrderBy(q);
      const walk = listingWalk(cursors, q, "deposit-addresses", {
        lists: lists.map(([name, values]) => [name, [...values].sort()]),
        time: time.given,
      });
      const sets = lists
        .filter(([, values]) => values.length > 0)
        .map(([name, values]) => [FIELD_OF[name], new Set(values)] as const);
      const match = (a: StoredAddress) => {
        if (!time.match(a.createdAtMs)) return false;
        for (const [field, set] of sets) {
          const v = a.record[field];
          if (v === undefined || !set.has(v)) return false;
        }
        return true;
      };
      const page = addresses.records.page(walk.order, walk.after, limit, match);
      return {
        items: page.items.map((a) => a.record),
        next_page_cursor: walk.nextCursor(page),
      };
    },
  );
}
