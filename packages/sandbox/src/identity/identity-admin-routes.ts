import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { ProblemError } from "../gateway/problem.ts";
import { requestBody } from "../input/body-fields.ts";
import { parseBool, type Query } from "../input/query-params.ts";
import { seeding } from "../input/seed-input.ts";
import { ADMIN_PREFIX } from "../paths.ts";
import { identityApi } from "./identity-api.ts";
import { syntheticSeedRows } from "./identity-seed.ts";
import type { SeedRow } from "./seed-row.ts";
import type { AddControlInput, SeedIdentity } from "./types.ts";

function num(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "number") throw new ProblemError(400, `${name} must be a number, got ${v}`);
  return v;
}

/**
 * Admin seeding of identities and controls, the twins of {@link identityApi}:
 * `POST /__sandbox/seed` `{identities}` or `{count, seed}`, and
 * `GET|POST /__sandbox/identities/{id}/controls`; and what only the platform itself may do:
 * `DELETE /__sandbox/controls/{id}` (any control, non-overridable included) and
 * `DELETE /__sandbox/identities/{id}` (the identity and its controls).
 *
 * @example
 *   registerIdentityAdminRoutes(app, ctx);
 */
export function registerIdentityAdminRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const api = identityApi(ctx);
  const mustExist = (id: string) => {
    if (!ctx.identities.get(id)) throw new ProblemError(404, `identity ${id} not found`);
  };

  app.post(`${ADMIN_PREFIX}/seed`, { bodyLimit: 256 * 1024 * 1024 }, async (request) => {
    const b = requestBody(request.body, "{identities} or {count, seed}");
    const opts = {
      migratedFraction: num(b.migrated_fraction, "migrated_fraction"),
      driftFraction: num(b.drift_fraction, "drift_fraction"),
      legacyDriftFraction: num(b.legacy_drift_fraction, "legacy_drift_fraction"),
      seed: num(b.seed, "seed"),
    };
    let rows: Iterable<SeedRow>;
    if (Array.isArray(b.identities)) rows = b.identities as SeedIdentity[];
    else if (typeof b.count === "number" && Number.isInteger(b.count) && b.count >= 0) {
      rows = syntheticSeedRows(b.count, opts.seed ?? 1);
    } else {
      throw new ProblemError(
        400,
        "give identities (an array of {id, user_disabled, admin_disabled, created_at?}) or count (an integer >= 0)",
      );
    }
    return seeding(() => api.seedIdentities(rows as Iterable<SeedIdentity>, opts));
  });

  app.post(`${ADMIN_PREFIX}/identities/:id/controls`, async (request) => {
    const { id } = request.params as { id: string };
    mustExist(id);
    const b = requestBody(
      request.body,
      "{type, set_by?, is_overridable?, reason_code?, reason?, deleted?}",
    );
    return seeding(() => api.addControl(id, b as unknown as AddControlInput));
  });

  app.patch(`${ADMIN_PREFIX}/identities/:id/legacy`, async (request) => {
    const { id } = request.params as { id: string };
    mustExist(id);
    const b = requestBody(request.body, "{user_disabled?, admin_disabled?}");
    return seeding(() => api.setLegacyFields(id, b as { user_disabled?: boolean }));
  });

  app.delete(`${ADMIN_PREFIX}/controls/:id`, async (request) => {
    const { id } = request.params as { id: string };
    if (!ctx.identities.findControl(id)) throw new ProblemError(404, `control ${id} not found`);
    return seeding(() => api.deleteControl(id));
  });

  app.delete(`${ADMIN_PREFIX}/identities/:id`, async (request, reply) => {
    const { id } = request.params as { id: string };
    mustExist(id);
    seeding(() => api.removeIdentity(id));
    return reply.code(204).send();
  });

  app.get(`${ADMIN_PREFIX}/identities/:id/controls`, async (request) => {
    const { id } = request.params as { id: string };
    mustExist(id);
    const includeDeleted = parseBool(request.query as Query, "include_deleted", false);
    return { items: seeding(() => api.controlsOf(id, { includeDeleted })) };
  });
}
