import type { FastifyInstance } from "fastify";
import type { SandboxContext } from "../context.ts";
import { ALREADY_EXISTS, INSUFFICIENT_FUNDS, ProblemError } from "../gateway/problem.ts";
import { answerWrite } from "../gateway/write-answer.ts";
import { badRequest, FieldReader } from "../input/body-fields.ts";
import { formatDecimal, parsePositiveDecimal } from "../input/decimal.ts";
import { operationSchema } from "../input/schema-validation.ts";
import { INTERNAL_TRANSFER_PATH } from "../paths.ts";
import { SCOPES } from "../types.ts";
import type { InternalTransfer } from "./transfer-store.ts";

const TRANSFER_FIELDS = [
  "from_profile_id",
  "to_profile_id",
  "amount",
  "asset",
  "ref_id",
  "metadata",
  "from_identity_id",
  "from_account_id",
  "to_identity_id",
  "to_account_id",
  "recipient_metadata",
] as const;

/** The request body, checked field by field (RangeError naming the field). */
export function transferBody(raw: unknown): InternalTransfer {
  const f = new FieldReader(raw, "the body", TRANSFER_FIELDS);
  const from = f.required("from_profile_id");
  const to = f.required("to_profile_id");
  const given = f.body.amount;
  if (given === undefined || given === null || given === "") {
    throw new RangeError('amount is required: a decimal string like "0.05"');
  }
  const amount = parsePositiveDecimal(given, "amount");
  const asset = f.asset("asset");
  if (from === to) throw new RangeError("from_profile_id and to_profile_id must differ");
  return {
    fromProfileId: from,
    toProfileId: to,
    amount,
    asset,
    refId: f.optional("ref_id"),
    metadata: f.metadata("metadata"),
    recipientMetadata: f.metadata("recipient_metadata"),
    fromIdentityId: f.optional("from_identity_id"),
    fromAccountId: f.optional("from_account_id"),
    toIdentityId: f.optional("to_identity_id"),
    toAccountId: f.optional("to_account_id"),
  };
}

/**
 * `POST /v2/transfer/internal`: moves an asset between two profiles of the account, atomically.
 *
 * As published: a reused ref_id is a 409 already-exists problem (whatever the new body says; checked
 * after the body, before the profiles and the balance), and insufficient funds a 403
 * insufficient-funds problem whose `meta` says profile_id, asset, available and needed.
 * Choices where the schema leaves room: the transfer completes at once (status COMPLETED, balances
 * moved before the answer); a ref_id is unique across the account; both profiles must exist (404
 * naming the field);
 * the fee comes from the fee table (0 unless seeded) and is paid by the sender; the credit record
 * carries recipient_metadata and to_identity_id/to_account_id. Unknown body fields are a 400.
 *
 * @example
 *   registerTransferRoutes(app, ctx);
 */
export function registerTransferRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { transfers, profiles } = ctx;

  app.post(
    INTERNAL_TRANSFER_PATH,
    {
      config: { endpoint: INTERNAL_TRANSFER_PATH, scope: SCOPES.writeInternalTransfer },
      schema: operationSchema("POST", INTERNAL_TRANSFER_PATH),
    },
    async (request, reply) => {
      const t = badRequest(() => transferBody(request.body));
      if (t.refId !== undefined) {
        const original = transfers.byRefId(t.refId);
        if (original) {
          throw new ProblemError(
            409,
            `a transfer with ref_id ${JSON.stringify(t.refId)} already exists: ${original.id}, created at ${original.created_at}`,
            ALREADY_EXISTS,
          );
        }
      }
      for (const [field, id] of [
        ["from_profile_id", t.fromProfileId],
        ["to_profile_id", t.toProfileId],
      ] as const) {
        if (!profiles.has(id)) throw new ProblemError(404, `${field}: profile ${id} not found`);
      }
      const outcome = transfers.transfer(t, new Date());
      if (outcome.kind === "insufficient") {
        const available = formatDecimal(outcome.available);
        const needed = formatDecimal(outcome.needed);
        throw new ProblemError(
          403,
          `insufficient ${t.asset} funds in profile ${t.fromProfileId}: ${needed} needed (amount ${formatDecimal(t.amount)} + fee ${formatDecimal(outcome.fee)}), ${available} available`,
          INSUFFICIENT_FUNDS,
          { profile_id: t.fromProfileId, asset: t.asset, available, needed },
        );
      }
      return answerWrite(ctx, request, reply, outcome.debit);
    },
  );
}
