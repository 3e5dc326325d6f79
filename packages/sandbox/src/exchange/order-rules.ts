/**
 * The platform's acceptance rules for orders, as pure functions: the time-in-force validity
 * matrix, the GTT lead time, identity pairing, and when a ref_id may be reused.
 */
import type { OrderStatus, OrderType, TimeInForce } from "./types.ts";

/** The time in force an order gets when it names none. */
export const DEFAULT_TIME_IN_FORCE: Readonly<Record<OrderType, TimeInForce>> = Object.freeze({
  MARKET: "IOC",
  LIMIT: "GTC",
  POST_ONLY_LIMIT: "GTC",
  STOP_MARKET: "GTC",
  STOP_LIMIT: "GTC",
});

/** The validity matrix: the times in force each order type accepts. */
export const VALID_TIME_IN_FORCE: Readonly<Record<OrderType, readonly TimeInForce[]>> =
  Object.freeze({
    MARKET: ["IOC"],
    LIMIT: ["IOC", "GTC", "GTT", "FOK"],
    POST_ONLY_LIMIT: ["IOC", "GTC", "GTT", "FOK"],
    STOP_MARKET: ["GTC", "GTT"],
    STOP_LIMIT: ["GTC", "GTT"],
  });

/** A GTT expiration_date must be more than this after placement. */
export const GTT_MIN_LEAD_MS = 10_000;
/** A ref_id is free again once its order has been closed for more than this. */
export const REF_ID_REUSE_AFTER_MS = 24 * 3600 * 1000;
export const CLOSED_ORDER_STATUSES: readonly OrderStatus[] = [
  "FILLED",
  "CANCELLED",
  "REJECTED",
  "EXPIRED",
];

/** What an order is at `nowMs`: an open GTT order past its expiration_date has EXPIRED then. */
export function orderStateAt(
  order: { status: OrderStatus; time_in_force: string; expiration_date?: string | undefined },
  closedAtMs: number | undefined,
  nowMs: number,
): { status: OrderStatus; closedAtMs: number | undefined } {
  if (closedAtMs === undefined && order.time_in_force === "GTT" && order.expiration_date) {
    const expiresAtMs = Date.parse(order.expiration_date);
    if (expiresAtMs < nowMs) return { status: "EXPIRED", closedAtMs: expiresAtMs };
  }
  return { status: order.status, closedAtMs };
}

export interface OrderTerms {
  type: OrderType;
  timeInForce: TimeInForce;
  placedAtMs: number;
  expirationMs: number | undefined;
  identityId: string | undefined;
  identityAccountId: string | undefined;
}

/**
 * Why the platform would reject an order with these terms, or undefined when it accepts them.
 *
 * @example
 *   rejectionReason({ type: "MARKET", timeInForce: "GTC", placedAtMs: 0, expirationMs: undefined,
 *     identityId: undefined, identityAccountId: undefined });
 *   // "time_in_force GTC is not valid for a MARKET order (valid: IOC)"
 */
export function rejectionReason(t: OrderTerms): string | undefined {
  const valid = VALID_TIME_IN_FORCE[t.type];
  if (!valid.includes(t.timeInForce)) {
    return `time_in_force ${t.timeInForce} is not valid for a ${t.type} order (valid: ${valid.join(", ")})`;
  }
  if (t.timeInForce === "GTT") {
    if (t.expirationMs === undefined) return "a GTT order needs an expiration_date";
    const lead = t.expirationMs - t.placedAtMs;
    if (lead <= GTT_MIN_LEAD_MS) {
      return `a GTT expiration_date must be more than ${GTT_MIN_LEAD_MS / 1000} s after placement; it is ${lead} ms after`;
    }
  } else if (t.expirationMs !== undefined) {
    return `expiration_date is only valid with time_in_force GTT, not ${t.timeInForce}`;
  }
  if ((t.identityId === undefined) !== (t.identityAccountId === undefined)) {
    return t.identityId === undefined
      ? "identity_account_id was given without identity_id; they must come together"
      : "identity_id was given without identity_account_id; they must come together";
  }
  return undefined;
}

/** The order currently holding a ref_id: its id, status and, once closed, when it closed. */
export interface RefHolder {
  id: string;
  status: OrderStatus;
  closedAtMs: number | undefined;
}

/**
 * Why a new order placed at `placedAtMs` may not take the ref_id `holder` has, or undefined when
 * the holder has been closed for more than 24 hours.
 */
export function refIdRefusal(
  refId: string,
  holder: RefHolder,
  placedAtMs: number,
): string | undefined {
  if (holder.closedAtMs === undefined) {
    return `ref_id ${JSON.stringify(refId)} is in use by order ${holder.id}, which is still ${holder.status}`;
  }
  const closedFor = placedAtMs - holder.closedAtMs;
  if (closedFor > REF_ID_REUSE_AFTER_MS) return undefined;
  return `ref_id ${JSON.stringify(refId)} belongs to order ${holder.id}, closed (${holder.status}) at ${new Date(holder.closedAtMs).toISOString()}; it may be reused only after ${new Date(holder.closedAtMs + REF_ID_REUSE_AFTER_MS).toISOString()}`;
}
