import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { ProblemError } from "../gateway/problem.ts";
import { answerWrite } from "../gateway/write-answer.ts";
import { operationSchema } from "../input/schema-validation.ts";
import { ORCHESTRATION_RULE_PATH } from "../paths.ts";
import { SCOPES } from "../types.ts";

/**
 * `DELETE /v2/orchestration/rules/{id}`: deletes a rule and answers `{rule}` as it now stands
 * (status DELETED). An unknown id and an already deleted one are both 404, the detail saying which.
 *
 * @example
 *   registerOrchestrationRoutes(app, ctx);
 */
export function registerOrchestrationRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.delete(
    ORCHESTRATION_RULE_PATH,
    {
      config: { endpoint: ORCHESTRATION_RULE_PATH, scope: SCOPES.writeOrchestrationRule },
      schema: operationSchema("DELETE", ORCHESTRATION_RULE_PATH),
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const outcome = ctx.rules.delete(id, new Date());
      if (outcome.kind === "not_found") {
        throw new ProblemError(404, `orchestration rule ${id} not found`);
      }
      if (outcome.kind === "already_deleted") {
        throw new ProblemError(
          404,
          `orchestration rule ${id} not found: it was deleted at ${outcome.deletedAt}`,
        );
      }
      return answerWrite(ctx, request, reply, { rule: outcome.rule });
    },
  );
}
