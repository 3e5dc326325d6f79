import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { ProblemError } from "../gateway/problem.ts";
import { DEFAULT_LIMIT, MAX_LIMIT, optionalParam, type Query } from "../input/query-params.ts";
import { operationSchema } from "../input/schema-validation.ts";
import {
  checkOrderBy,
  enumParam,
  intParam,
  listingWalk,
  rejectUnknownParams,
  timeRange,
} from "../paging/listing-query.ts";
import { ORDER_PATH, QUOTE_EXECUTIONS_PATH } from "../paths.ts";
import { SCOPES } from "../types.ts";
import { orderAt, type StoredExecution } from "./exchange-store.ts";
import { EXECUTION_STATUSES, MARKETS, SIDES } from "./types.ts";

const EXECUTION_PARAMS = [
  "side",
  "market",
  "status",
  "created_at.begin",
  "created_at.end",
  "limit",
  "order",
  "order_by",
  "page_cursor",
  "pagination.limit",
  "pagination.offset",
] as const;

/** Largest pagination.offset accepted; deeper pages should walk with page_cursor. */
const MAX_OFFSET = 1_000_000;

/** limit + page_cursor (keyset), or pagination.limit + pagination.offset; never a mix. */
function pagingOf(q: Query): {
  limit: number;
  offset: number | undefined;
  cursor: string | undefined;
} {
  const cursor = optionalParam(q, "page_cursor");
  const pLimit = intParam(q, "pagination.limit", 1, MAX_LIMIT);
  const pOffset = intParam(q, "pagination.offset", 0, MAX_OFFSET);
  if (cursor !== undefined && (pLimit !== undefined || pOffset !== undefined)) {
    throw new ProblemError(
      400,
      "page_cursor cannot be combined with pagination.limit or pagination.offset: page with limit and page_cursor, or with pagination.limit and pagination.offset",
    );
  }
  const limit = intParam(q, "limit", 1, MAX_LIMIT);
  if (limit !== undefined && pLimit !== undefined) {
    throw new ProblemError(400, "give limit or pagination.limit, not both");
  }
  return { limit: limit ?? pLimit ?? DEFAULT_LIMIT, offset: pOffset, cursor };
}

/**
 * The exchange reads: a profile's quote executions (filtered, keyset- or offset-paginated, with
 * total_count) and one order of a profile.
 *
 * Choices where the issue leaves room: limit defaults to 100 (at most 1000); total_count counts
 * every execution matching the filters, not only those left after the cursor; a page_cursor must
 * come with the same filters as the request that returned it (order may be omitted); an offset
 * page also returns a next_page_cursor, so a walk can continue by cursor; an unknown profile is a
 * 404, and an order of another profile is the same 404 as an unknown order (no existence leak).
 *
 * @example
 *   registerExchangeRoutes(app, ctx);
 */
export function registerExchangeRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { exchange, profiles, cursors } = ctx;

  app.get(
    QUOTE_EXECUTIONS_PATH,
    {
      config: { endpoint: QUOTE_EXECUTIONS_PATH, scope: SCOPES.readQuoteExecution },
      schema: operationSchema("GET", QUOTE_EXECUTIONS_PATH),
    },
    async (request) => {
      const { profile_id: profileId } = request.params as { profile_id: string };
      const q = request.query as Query;
      rejectUnknownParams(q, EXECUTION_PARAMS);
      const side = enumParam(q, "side", SIDES);
      const market = enumParam(q, "market", MARKETS);
      const status = enumParam(q, "status", EXECUTION_STATUSES);
      const time = timeRange(q, { "created_at.begin": "gte", "created_at.end": "lte" });
      checkOrderBy(q);
      const paging = pagingOf(q);
      const walk = listingWalk(
        cursors,
        q,
        "quote-executions",
        { profileId, side, market, status, time: time.given },
        paging.cursor,
      );
      if (!profiles.has(profileId)) throw new ProblemError(404, `profile ${profileId} not found`);
      const match = (e: StoredExecution) =>
        (side === undefined || e.record.side === side) &&
        (market === undefined || e.record.market === market) &&
        (status === undefined || e.record.status === status) &&
        time.match(e.createdAtMs);
      const list = exchange.executionsOf(profileId);
      const page = !list
        ? { items: [], more: false }
        : paging.offset !== undefined
          ? list.pageFromOffset(walk.order, paging.offset, paging.limit, match)
          : list.page(walk.order, walk.after, paging.limit, match);
      return {
        total_count: list ? list.count(match) : 0,
        items: page.items.map((e) => e.record),
        next_page_cursor: walk.nextCursor(page),
      };
    },
  );

  app.get(
    ORDER_PATH,
    {
      config: { endpoint: ORDER_PATH, scope: SCOPES.readOrder },
      schema: operationSchema("GET", ORDER_PATH),
    },
    async (request) => {
      const { profile_id: profileId, id } = request.params as { profile_id: string; id: string };
      const found = exchange.order(id);
      if (!found || found.record.profile_id !== profileId) {
        throw new ProblemError(404, `order ${id} not found in profile ${profileId}`);
      }
      return orderAt(found, Date.now());
    },
  );
}
