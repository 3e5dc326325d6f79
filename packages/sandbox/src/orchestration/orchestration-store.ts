import { randomUUID } from "node:crypto";
import { type Body, FieldReader, objectOf } from "../input/body-fields.ts";
import { addressFor } from "../input/crypto-address.ts";
import { SeedConflictError } from "../input/seed-input.ts";
import { schemaEnum } from "../shared.ts";
import type { OrchestrationRule, RuleEndpoint } from "./types.ts";

/** The published CryptoNetwork enum, for rule endpoints on a chain. */
const CRYPTO_NETWORKS = schemaEnum("CryptoNetwork");

const RULE_FIELDS = [
  "id",
  "ref_id",
  "nickname",
  "profile_id",
  "identity_id",
  "account_id",
  "source_asset",
  "destination_asset",
  "source",
  "destination",
  "created_at",
] as const;

/** The one variant (crypto, fiat or profile) an endpoint object holds, and what it holds. */
function variantOf(raw: unknown, field: string): [keyof RuleEndpoint, unknown] {
  const b = objectOf(raw, field);
  const keys = Object.keys(b);
  if (keys.length !== 1 || !["crypto", "fiat", "profile"].includes(keys[0]!)) {
    throw new RangeError(
      `${field} must hold exactly one of crypto, fiat or profile, got ${keys.length === 0 ? "none" : keys.join(", ")}`,
    );
  }
  const kind = keys[0] as keyof RuleEndpoint;
  return [kind, b[kind]];
}

function optional<T extends object>(o: T, extra: Record<string, string | undefined>): T {
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) (o as Body)[k] = v;
  return o;
}

/** Names nested fields by their path ("destination.crypto.network ..."), not their bare name. */
function within<T>(prefix: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RangeError && !err.message.startsWith(prefix)) {
      throw new RangeError(`${prefix}.${err.message}`);
    }
    throw err;
  }
}

/** A rule's source: a crypto or fiat deposit (instructions generated when absent) or a profile. */
function sourceOf(raw: unknown): RuleEndpoint {
  const [kind, held] = variantOf(raw, "source");
  return within(`source.${kind}`, () => sourceVariant(kind, held));
}

function sourceVariant(kind: keyof RuleEndpoint, raw: unknown): RuleEndpoint {
  if (kind === "crypto") {
    const f = new FieldReader(raw, "source.crypto", ["network", "address", "address_id"]);
    const network = f.oneOf("network", CRYPTO_NETWORKS);
    const addressId = f.optional("address_id") ?? randomUUID();
    return {
      crypto: {
        address_id: addressId,
        address: f.optional("address") ?? addressFor(network, addressId),
        network,
      },
    };
  }
  if (kind === "fiat") {
    const f = new FieldReader(raw, "source.fiat", [
      "network",
      "account_type",
      "deposit_instructions_id",
      "memo_id",
    ]);
    return {
      fiat: {
        deposit_instructions_id: f.optional("deposit_instructions_id") ?? randomUUID(),
        network: f.optional("network") ?? "WIRE",
        account_type: f.optional("account_type") ?? "CHECKING",
        memo_id: f.optional("memo_id") ?? randomUUID().slice(0, 8).toUpperCase(),
      },
    };
  }
  const f = new FieldReader(raw, "source.profile", ["profile_id"]);
  return { profile: { profile_id: f.required("profile_id") } };
}

/** A rule's destination: a crypto address, a bank account or a profile. */
function destinationOf(raw: unknown): RuleEndpoint {
  const [kind, held] = variantOf(raw, "destination");
  return within(`destination.${kind}`, () => destinationVariant(kind, held));
}

function destinationVariant(kind: keyof RuleEndpoint, raw: unknown): RuleEndpoint {
  if (kind === "crypto") {
    const f = new FieldReader(raw, "destination.crypto", ["network", "address"]);
    return {
      crypto: { network: f.oneOf("network", CRYPTO_NETWORKS), address: f.required("address") },
    };
  }
  if (kind === "fiat") {
    const f = new FieldReader(raw, "destination.fiat", ["fiat_account_id", "memo"]);
    return {
      fiat: optional(
        { fiat_account_id: f.required("fiat_account_id") },
        { memo: f.optional("memo") },
      ),
    };
  }
  const f = new FieldReader(raw, "destination.profile", ["profile_id"]);
  return { profile: { profile_id: f.required("profile_id") } };
}

/** One ACTIVE orchestration rule from its seed. */
export function ruleFromSeed(raw: unknown, now: () => number): OrchestrationRule {
  const f = new FieldReader(raw, "an orchestration rule", RULE_FIELDS);
  const sourceAsset = f.asset("source_asset");
  const destinationAsset = f.asset("destination_asset");
  const rule: OrchestrationRule = {
    id: f.optional("id") ?? randomUUID(),
    ref_id: f.required("ref_id"),
    nickname: f.optional("nickname") ?? `${sourceAsset} to ${destinationAsset}`,
    profile_id: f.required("profile_id"),
    status: "ACTIVE",
    source_asset: sourceAsset,
    destination_asset: destinationAsset,
    source: sourceOf(f.body.source),
    destination: destinationOf(f.body.destination),
    created_at: new Date(f.instant("created_at", now)).toISOString(),
  };
  return optional(rule, {
    identity_id: f.optional("identity_id"),
    account_id: f.optional("account_id"),
  });
}

export type RuleDeleteOutcome =
  | { kind: "deleted"; rule: OrchestrationRule }
  | { kind: "not_found" }
  | { kind: "already_deleted"; deletedAt: string };

/**
 * Orchestration rules by id. A deleted rule is kept with status DELETED (and still holds its
 * ref_id, as "a rule with that ref_id already exists" stays true).
 */
export class OrchestrationStore {
  private rules = new Map<string, { rule: OrchestrationRule; deletedAt?: string }>();
  private refIds = new Set<string>();
  private deletedCount = 0;

  get counts(): { active: number; deleted: number } {
    return { active: this.rules.size - this.deletedCount, deleted: this.deletedCount };
  }

  add(batch: readonly OrchestrationRule[]): void {
    const ids = new Set<string>();
    const refs = new Set<string>();
    for (const r of batch) {
      if (this.rules.has(r.id) || ids.has(r.id)) {
        throw new SeedConflictError(`an orchestration rule with id ${r.id} already exists`);
      }
      if (this.refIds.has(r.ref_id) || refs.has(r.ref_id)) {
        throw new SeedConflictError(
          `an orchestration rule with ref_id ${JSON.stringify(r.ref_id)} already exists`,
        );
      }
      ids.add(r.id);
      refs.add(r.ref_id);
    }
    for (const r of batch) {
      this.rules.set(r.id, { rule: r });
      this.refIds.add(r.ref_id);
    }
  }

  delete(id: string, now: Date): RuleDeleteOutcome {
    const entry = this.rules.get(id);
    if (!entry) return { kind: "not_found" };
    if (entry.deletedAt !== undefined)
      return { kind: "already_deleted", deletedAt: entry.deletedAt };
    entry.rule.status = "DELETED";
    entry.deletedAt = now.toISOString();
    this.deletedCount++;
    return { kind: "deleted", rule: structuredClone(entry.rule) };
  }

  all(): OrchestrationRule[] {
    return [...this.rules.values()].map((e) => structuredClone(e.rule));
  }

  reset(): void {
    this.rules = new Map();
    this.refIds = new Set();
    this.deletedCount = 0;
  }
}
