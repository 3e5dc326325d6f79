import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Position in one identity's append-only control list. */
export interface ControlCursor {
  k: "c";
  /** The identity the cursor belongs to, and whether deleted controls are included. */
  i: string;
  d: boolean;
  /** Index of the last control returned. */
  p: number;
}

/**
 * Keyset position in one of the (created_at, id) listings: identities, quote executions, deposit
 * addresses. The filters are bound by a fingerprint, not carried: a deposit-address query can hold
 * 600 ids.
 */
export interface ListingCursor {
  k: "x";
  /** The listing, e.g. "identities" or "quote-executions". */
  l: string;
  /** Fingerprint of the listing's filters (and path parameters). */
  f: string;
  /** Order the walk started with; a cursor cannot switch direction. */
  o: "ASC" | "DESC";
  /** created_at (epoch ms) and id of the last item returned. */
  t: number;
  id: string;
}

export type Cursor = ControlCursor | ListingCursor;

/**
 * Opaque, tamper-evident page cursors: base64url(JSON) + "." + truncated HMAC-SHA256 under a key
 * drawn once per process. A client can neither forge nor edit one, and a cursor from another
 * sandbox process is refused, as a real platform would.
 *
 * @example
 *   const codec = new CursorCodec();
 *   const token = codec.encode({ k: "c", i: "id-1", d: false, p: 9 });
 *   codec.decode(token); // { k: "c", i: "id-1", d: false, p: 9 }
 *   codec.decode(token + "x"); // undefined
 */
export class CursorCodec {
  readonly #key: Buffer;

  constructor(key: Buffer = randomBytes(32)) {
    this.#key = key;
  }

  encode(cursor: Cursor): string {
    const body = Buffer.from(JSON.stringify(cursor)).toString("base64url");
    return `${body}.${this.sign(body).toString("base64url")}`;
  }

  /** The cursor, or undefined when it is malformed, forged or edited. */
  decode(token: string): Cursor | undefined {
    const dot = token.indexOf(".");
    if (dot <= 0 || dot === token.length - 1) return undefined;
    const body = token.slice(0, dot);
    const mac = Buffer.from(token.slice(dot + 1), "base64url");
    const expected = this.sign(body);
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return undefined;
    try {
      const value = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Cursor;
      return isCursor(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }

  private sign(body: string): Buffer {
    return createHmac("sha256", this.#key).update(body).digest().subarray(0, 16);
  }
}

function isCursor(v: unknown): v is Cursor {
  if (typeof v !== "object" || v === null) return false;
  const c = v as Record<string, unknown>;
  if (c.k === "x") {
    return (
      typeof c.l === "string" &&
      typeof c.f === "string" &&
      (c.o === "ASC" || c.o === "DESC") &&
      typeof c.t === "number" &&
      typeof c.id === "string"
    );
  }
  if (c.k === "c") {
    return typeof c.i === "string" && typeof c.d === "boolean" && Number.isInteger(c.p);
  }
  return false;
}
