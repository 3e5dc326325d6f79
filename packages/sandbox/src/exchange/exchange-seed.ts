/**
 * Turns admin seeds into stored quote executions and orders: field checks (RangeError naming the
 * field), defaults, canonical decimals, and the platform's acceptance rules for orders.
 */
import { randomUUID } from "node:crypto";
import { type Body, compact, FieldReader, parseInstant } from "../input/body-fields.ts";
import {
  formatDecimal,
  multiplyDecimal,
  parseDecimal,
  parsePositiveDecimal,
} from "../input/decimal.ts";
import { prng, uuidFrom } from "../shared.ts";
import { closedAt, type StoredExecution, type StoredOrder } from "./exchange-store.ts";
import { DEFAULT_TIME_IN_FORCE, rejectionReason } from "./order-rules.ts";
import {
  EXECUTION_STATUSES,
  MARKETS,
  type Market,
  ORDER_STATUSES,
  ORDER_TYPES,
  type Order,
  type OrderType,
  type QuoteExecution,
  SIDES,
  type SyntheticQuoteExecutions,
  TIME_IN_FORCE,
} from "./types.ts";

/** ETHUSD → ETH / USD: every market quotes in a three-letter fiat. */
export function assetsOf(market: Market): { base: string; quote: string } {
  return { base: market.slice(0, -3), quote: market.slice(-3) };
}

const EXECUTION_FIELDS = [
  "profile_id",
  "id",
  "quote_id",
  "status",
  "market",
  "side",
  "price",
  "base_amount",
  "base_asset",
  "quote_amount",
  "quote_asset",
  "created_at",
  "settled_at",
  "metadata",
] as const;

/** One quote execution from its seed; quote_amount defaults to price × base_amount. */
export function executionFromSeed(raw: unknown, now: () => number): StoredExecution {
  const f = new FieldReader(raw, "a quote execution", EXECUTION_FIELDS);
  const b = f.body;
  const market = f.oneOf("market", MARKETS);
  const { base, quote } = assetsOf(market);
  for (const [field, expected] of [
    ["base_asset", base],
    ["quote_asset", quote],
  ] as const) {
    const given = f.optional(field);
    if (given !== undefined && given !== expected) {
      throw new RangeError(`${field} of market ${market} is ${expected}, got ${given}`);
    }
  }
  const price = parsePositiveDecimal(b.price, "price");
  const baseAmount = parsePositiveDecimal(b.base_amount, "base_amount");
  const quoteAmount =
    b.quote_amount === undefined
      ? multiplyDecimal(price, baseAmount)
      : parsePositiveDecimal(b.quote_amount, "quote_amount");
  const status = f.oneOf("status", EXECUTION_STATUSES, "SETTLED");
  const createdAtMs = f.instant("created_at", now);
  let settledAt: string | undefined;
  if (status === "SETTLED") {
    const settledAtMs = f.instant("settled_at", () => createdAtMs);
    if (settledAtMs < createdAtMs) throw new RangeError("settled_at must not precede created_at");
    settledAt = new Date(settledAtMs).toISOString();
  } else if (b.settled_at !== undefined && b.settled_at !== null) {
    throw new RangeError("a CREATED quote execution has no settled_at; use status SETTLED");
  }
  const record: QuoteExecution = compact({
    id: f.optional("id") ?? randomUUID(),
    profile_id: f.required("profile_id"),
    quote_id: f.optional("quote_id") ?? randomUUID(),
    status,
    market,
    side: f.oneOf("side", SIDES),
    price: formatDecimal(price),
    base_amount: formatDecimal(baseAmount),
    base_asset: base,
    quote_amount: formatDecimal(quoteAmount),
    quote_asset: quote,
    created_at: new Date(createdAtMs).toISOString(),
    settled_at: settledAt,
    metadata: f.metadata("metadata"),
  });
  return { id: record.id, createdAtMs, record };
}

/** Synthetic executions start here, two per second, so ties exercise the id tie-break. */
const SYNTHETIC_EPOCH_MS = Date.UTC(2024, 0, 1);

/**
 * `count` deterministic executions for one profile: every market, both sides, ~20% CREATED.
 *
 * @example
 *   syntheticExecutions({ profile_id: "p", count: 3, seed: 1 }).length; // 3
 */
export function syntheticExecutions(s: SyntheticQuoteExecutions): StoredExecution[] {
  if (typeof s.profile_id !== "string" || s.profile_id === "") {
    throw new RangeError("profile_id is required");
  }
  if (!(Number.isInteger(s.count) && s.count >= 0 && s.count <= 1_000_000)) {
    throw new RangeError(`count must be an integer between 0 and 1000000, got ${s.count}`);
  }
  const rand = prng((s.seed ?? 1) ^ 0x2c1b3c6d);
  const out: StoredExecution[] = [];
  for (let i = 0; i < s.count; i++) {
    const market = MARKETS[Math.floor(rand() * MARKETS.length)]!;
    const cents = 100 + Math.floor(rand() * 5_000_000);
    const sats = 1 + Math.floor(rand() * 1_000_000_000);
    const settled = rand() >= 0.2;
    const createdAtMs = SYNTHETIC_EPOCH_MS + Math.floor(i / 2) * 1000;
    out.push(
      executionFromSeed(
        {
          id: uuidFrom(rand),
          quote_id: uuidFrom(rand),
          profile_id: s.profile_id,
          market,
          side: rand() < 0.5 ? "BUY" : "SELL",
          status: settled ? "SETTLED" : "CREATED",
          price: formatDecimal(BigInt(cents) * 10n ** 16n),
          base_amount: formatDecimal(BigInt(sats) * 10n ** 10n),
          created_at: new Date(createdAtMs).toISOString(),
          metadata: { n: String(i) },
        },
        () => createdAtMs,
      ),
    );
  }
  return out;
}

const ORDER_FIELDS = [
  "profile_id",
  "id",
  "ref_id",
  "status",
  "side",
  "market",
  "type",
  "price",
  "base_amount",
  "quote_amount",
  "stop_price",
  "time_in_force",
  "expiration_date",
  "identity_id",
  "identity_account_id",
  "recipient_profile_id",
  "metadata",
  "created_at",
  "modified_at",
  "amount_filled",
  "volume_weighted_average_price",
  "is_triggered",
] as const;

/** An amount the order does not have (a MARKET order's price...) reads "", as the platform answers. */
const notApplicable = (v: bigint | undefined): string => (v === undefined ? "" : formatDecimal(v));

/** The amounts each order type must state, as the platform's create-order call requires them. */
function requiredAmounts(type: OrderType, side: string): readonly string[] {
  switch (type) {
    case "MARKET":
      return side === "BUY" ? ["quote_amount"] : ["base_amount"];
    case "STOP_MARKET":
      return ["stop_price", "base_amount"];
    case "STOP_LIMIT":
      return ["stop_price", "price", "base_amount"];
    default:
      return ["price", "base_amount"];
  }
}

function amount(b: Body, field: string, required: boolean): bigint | undefined {
  if (b[field] === undefined || b[field] === null) {
    if (required) throw new RangeError(`${field} is required for this order type and side`);
    return undefined;
  }
  return parsePositiveDecimal(b[field], field);
}

/**
 * One order from its seed, with the acceptance rules applied: an order breaking one is kept with
 * status REJECTED (closed at placement) and the reason returned beside it.
 */
export function orderFromSeed(
  raw: unknown,
  now: () => number,
): { stored: StoredOrder; rejection: string | undefined } {
  const f = new FieldReader(raw, "an order", ORDER_FIELDS);
  const b = f.body;
  const type = f.oneOf("type", ORDER_TYPES);
  const side = f.oneOf("side", SIDES);
  const need = requiredAmounts(type, side);
  const amounts = Object.fromEntries(
    ["price", "base_amount", "quote_amount", "stop_price"].map((name) => [
      name,
      amount(b, name, need.includes(name)),
    ]),
  ) as Record<string, bigint | undefined>;
  const timeInForce = f.oneOf("time_in_force", TIME_IN_FORCE, DEFAULT_TIME_IN_FORCE[type]);
  const placedAtMs = f.instant("created_at", now);
  // A sub-millisecond remainder counts as half a millisecond, so 10.0005 s is "more than 10 s".
  const exp =
    b.expiration_date === undefined || b.expiration_date === null
      ? undefined
      : parseInstant(b.expiration_date, "expiration_date");
  const expiration = exp && (exp.exact ? exp.ms : exp.ms + 0.5);
  const identityId = f.optional("identity_id");
  const identityAccountId = f.optional("identity_account_id");
  const rejection = rejectionReason({
    type,
    timeInForce,
    placedAtMs,
    expirationMs: expiration,
    identityId,
    identityAccountId,
  });
  let modifiedAtMs = f.instant("modified_at", () => placedAtMs);
  if (modifiedAtMs < placedAtMs) throw new RangeError("modified_at must not precede created_at");
  if (b.is_triggered !== undefined && typeof b.is_triggered !== "boolean") {
    throw new RangeError("is_triggered must be a boolean");
  }
  const filled =
    b.amount_filled === undefined ? 0n : parseDecimal(b.amount_filled, "amount_filled");
  const vwap =
    b.volume_weighted_average_price === undefined
      ? undefined
      : parseDecimal(b.volume_weighted_average_price, "volume_weighted_average_price");
  let status = f.oneOf("status", ORDER_STATUSES, "SUBMITTED");
  if (rejection !== undefined) {
    status = "REJECTED";
    modifiedAtMs = placedAtMs;
  }
  const record: Order = compact({
    id: f.optional("id") ?? randomUUID(),
    profile_id: f.required("profile_id"),
    ref_id: f.optional("ref_id"),
    status,
    side,
    market: f.oneOf("market", MARKETS),
    type,
    price: notApplicable(amounts.price),
    base_amount: notApplicable(amounts.base_amount),
    quote_amount: notApplicable(amounts.quote_amount),
    stop_price: amounts.stop_price === undefined ? undefined : formatDecimal(amounts.stop_price),
    metadata: f.metadata("metadata"),
    created_at: new Date(placedAtMs).toISOString(),
    modified_at: new Date(modifiedAtMs).toISOString(),
    amount_filled: formatDecimal(rejection === undefined ? filled : 0n),
    volume_weighted_average_price: notApplicable(rejection === undefined ? vwap : undefined),
    time_in_force: timeInForce,
    expiration_date: exp === undefined ? undefined : new Date(exp.ms).toISOString(),
    identity_id: identityId,
    identity_account_id: identityAccountId,
    recipient_profile_id: f.optional("recipient_profile_id"),
    is_triggered: (b.is_triggered as boolean | undefined) ?? false,
  });
  return {
    stored: { record, placedAtMs, closedAtMs: closedAt(record, modifiedAtMs) },
    rejection,
  };
}
