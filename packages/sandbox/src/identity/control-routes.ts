import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { ProblemError } from "../gateway/problem.ts";
import { answerWrite } from "../gateway/write-answer.ts";
import { requestBody } from "../input/body-fields.ts";
import {
  optionalParam,
  parseBool,
  parseLimit,
  type Query,
  requireParam,
} from "../input/query-params.ts";
import { operationSchema } from "../input/schema-validation.ts";
import { CONTROLS_PATH } from "../paths.ts";
import { SCOPES } from "../types.ts";
import { CLIENT_CONTROL_TYPES, PREVIEW_REASON_CODES, REASON_CODES } from "./types.ts";
import { controlListSchema, controlSchema } from "./wire-schemas.ts";

function createBody(body: unknown): {
  identity_id: string;
  type: string;
  reason_code: string;
  reason: string;
} {
  const b = requestBody(body, "{identity_id, type, reason_code, reason}");
  if (typeof b.identity_id !== "string" || b.identity_id === "") {
    throw new ProblemError(400, "identity_id is required and must be a non-empty string");
  }
  if (b.type === "FROZEN") {
    throw new ProblemError(
      400,
      "type FROZEN is set by the platform only; clients may create SELL_ONLY, CLOSED or DORMANT",
    );
  }
  if (typeof b.type !== "string" || !(CLIENT_CONTROL_TYPES as readonly string[]).includes(b.type)) {
    throw new ProblemError(
      400,
      `type must be one of ${CLIENT_CONTROL_TYPES.join(", ")}, got ${JSON.stringify(b.type ?? null)}`,
    );
  }
  if (b.reason_code === undefined || b.reason_code === null || b.reason_code === "") {
    throw new ProblemError(400, `reason_code is required: one of ${REASON_CODES.join(", ")}`);
  }
  const reasonCode =
    typeof b.reason_code === "string"
      ? (PREVIEW_REASON_CODES[b.reason_code] ?? b.reason_code)
      : b.reason_code;
  if (typeof reasonCode !== "string" || !(REASON_CODES as readonly string[]).includes(reasonCode)) {
    throw new ProblemError(
      400,
      `reason_code must be one of ${REASON_CODES.join(", ")}, got ${JSON.stringify(b.reason_code)}`,
    );
  }
  if (b.reason !== undefined && typeof b.reason !== "string") {
    throw new ProblemError(400, `reason must be a string, got ${typeof b.reason}`);
  }
  return {
    identity_id: b.identity_id,
    type: b.type,
    reason_code: reasonCode,
    reason: (b.reason as string | undefined) ?? "",
  };
}

/**
 * The identity-controls endpoints (list, create, delete). Limits, faults and auth run before them in the request guard; here only validation and
 * the store.
 *
 * Choices where the reference leaves room: a created control's set_by is the client's in the
 * sandbox's spelling (SET_BY_CLIENT unless started with the short one); `deleted_at` is omitted while a control is active (the schema types it as a
 * date-time string, so null would break it); deleting a non-overridable control is 403; deleting
 * an already deleted control and, under the reject policy, a second active control of one type
 * are 409. Errors are problem+json.
 *
 * @example
 *   registerControlRoutes(app, ctx); // then app.listen(...)
 */
export function registerControlRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  registerList(app, ctx);
  registerCreate(app, ctx);
  registerDelete(app, ctx);
}

/** GET: one identity's controls, a page at a time, the cursor bound to the listing's filters. */
function registerList(app: FastifyInstance, ctx: SandboxContext): void {
  const { identities: store, cursors } = ctx;
  app.get(
    CONTROLS_PATH,
    {
      config: { endpoint: CONTROLS_PATH, scope: SCOPES.readControl },
      schema: { ...operationSchema("GET", CONTROLS_PATH), response: { 200: controlListSchema } },
    },
    async (request) => {
      const q = request.query as Query;
      const identityId = requireParam(q, "identity_id");
      const includeDeleted = parseBool(q, "include_deleted", false);
      const limit = parseLimit(q);
      const raw = optionalParam(q, "page_cursor");
      let after = -1;
      if (raw !== undefined) {
        const c = cursors.decode(raw);
        if (c?.k !== "c")
          throw new ProblemError(400, "page_cursor is not a valid cursor of this listing");
        if (c.i !== identityId || c.d !== includeDeleted) {
          throw new ProblemError(
            400,
            "page_cursor belongs to another listing (identity_id or include_deleted differ)",
          );
        }
        after = c.p;
      }
      const identity = store.get(identityId);
      if (!identity) throw new ProblemError(404, `identity ${identityId} not found`);
      const page = store.pageControls(identity, includeDeleted, after, limit);
      return {
        items: page.items,
        next_page_cursor: page.more
          ? cursors.encode({ k: "c", i: identityId, d: includeDeleted, p: page.lastIndex })
          : "",
      };
    },
  );
}

/** POST: a client control, refused as the platform refuses it. */
function registerCreate(app: FastifyInstance, ctx: SandboxContext): void {
  const store = ctx.identities;
  app.post(
    CONTROLS_PATH,
    {
      config: { endpoint: CONTROLS_PATH, scope: SCOPES.writeControl },
      schema: { ...operationSchema("POST", CONTROLS_PATH), response: { 200: controlSchema } },
    },
    async (request, reply) => {
      const body = createBody(request.body);
      const identity = store.get(body.identity_id);
      if (!identity) throw new ProblemError(404, `identity ${body.identity_id} not found`);
      if (ctx.limits.duplicatePolicy === "reject" && store.hasActiveOfType(identity, body.type)) {
        throw new ProblemError(
          409,
          `identity ${identity.id} already has an active ${body.type} control`,
        );
      }
      const record = store.insertControl(
        identity,
        {
          type: body.type,
          set_by: ctx.setBy.client,
          is_overridable: true,
          reason_code: body.reason_code,
          reason: body.reason,
        },
        { touch: true },
      );
      ctx.writes.creates++;
      return answerWrite(ctx, request, reply, record);
    },
  );
}

/** DELETE: a control by id; not overridable is 403, already deleted 409. */
function registerDelete(app: FastifyInstance, ctx: SandboxContext): void {
  const store = ctx.identities;
  app.delete(
    CONTROLS_PATH,
    {
      config: { endpoint: CONTROLS_PATH, scope: SCOPES.writeControl },
      schema: operationSchema("DELETE", CONTROLS_PATH),
    },
    async (request, reply) => {
      const q = request.query as Query;
      const controlId = requireParam(q, "control_id");
      optionalParam(q, "reason");
      const outcome = store.deleteControl(controlId);
      switch (outcome.kind) {
        case "not_found":
          throw new ProblemError(404, `control ${controlId} not found`);
        case "already_deleted":
          throw new ProblemError(
            409,
            `control ${controlId} was already deleted at ${outcome.control.deleted_at}`,
          );
        case "not_overridable":
          throw new ProblemError(
            403,
            `control ${controlId} is not overridable (set_by ${outcome.control.set_by}); a client cannot delete it`,
          );
        default:
          ctx.writes.deletes++;
          return answerWrite(ctx, request, reply, {});
      }
    },
  );
}
