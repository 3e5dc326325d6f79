/**
 * Decimal amounts as the platform writes them (strings), held as BigInt fixed point with 18
 * decimals so that balances, amount + fee and price × amount never meet a binary float.
 */

/** Digits kept after the decimal point; more are refused rather than rounded. */
export const DECIMAL_SCALE = 18;
const ONE = 10n ** BigInt(DECIMAL_SCALE);
/** The platform's amount pattern. */
export const AMOUNT_PATTERN = /^[0-9]*\.?[0-9]+$/;
/** Integer digits accepted; far beyond any real amount, it only keeps absurd inputs out. */
const MAX_INTEGER_DIGITS = 30;

/**
 * Parses a decimal string into fixed point (value × 10^18). Throws a RangeError naming `field`
 * when the value is not a string of the platform's pattern or has more than 18 decimals.
 *
 * @example
 *   parseDecimal("12.5", "amount"); // 12500000000000000000n
 *   parseDecimal(12.5, "amount"); // throws "amount must be a decimal string like \"12.5\", not a JSON number"
 */
export function parseDecimal(raw: unknown, field: string): bigint {
  if (typeof raw === "number") {
    throw new RangeError(
      `${field} must be a decimal string like "12.5", not a JSON number (floats lose precision)`,
    );
  }
  if (typeof raw !== "string") {
    throw new RangeError(`${field} must be a decimal string like "12.5", got ${typeof raw}`);
  }
  if (!AMOUNT_PATTERN.test(raw)) {
    throw new RangeError(
      `${field} must match ^[0-9]*\\.?[0-9]+$ (digits, at most one point, no sign or exponent), got ${JSON.stringify(raw.slice(0, 60))}`,
    );
  }
  const dot = raw.indexOf(".");
  const intPart = (dot < 0 ? raw : raw.slice(0, dot)).replace(/^0+/, "");
  const fracPart = dot < 0 ? "" : raw.slice(dot + 1);
  if (fracPart.length > DECIMAL_SCALE) {
    throw new RangeError(
      `${field} has ${fracPart.length} decimals; at most ${DECIMAL_SCALE} are supported, got ${JSON.stringify(raw.slice(0, 60))}`,
    );
  }
  if (intPart.length > MAX_INTEGER_DIGITS) {
    throw new RangeError(`${field} has more than ${MAX_INTEGER_DIGITS} integer digits`);
  }
  return BigInt(intPart || "0") * ONE + BigInt(fracPart.padEnd(DECIMAL_SCALE, "0"));
}

/** Like {@link parseDecimal}, and the value must be greater than zero. */
export function parsePositiveDecimal(raw: unknown, field: string): bigint {
  const v = parseDecimal(raw, field);
  if (v <= 0n) throw new RangeError(`${field} must be greater than 0, got ${JSON.stringify(raw)}`);
  return v;
}

/**
 * Renders fixed point in canonical form: no leading zeros, no trailing fractional zeros, no
 * exponent ("12.5", "0.000000000000000001", "3").
 *
 * @example
 *   formatDecimal(12500000000000000000n); // "12.5"
 */
export function formatDecimal(v: bigint): string {
  const sign = v < 0n ? "-" : "";
  const abs = v < 0n ? -v : v;
  const int = abs / ONE;
  const frac = (abs % ONE).toString().padStart(DECIMAL_SCALE, "0").replace(/0+$/, "");
  return frac === "" ? `${sign}${int}` : `${sign}${int}.${frac}`;
}

/** a × b in fixed point, truncated to 18 decimals (as a ledger rounds a notional down). */
export function multiplyDecimal(a: bigint, b: bigint): bigint {
  return (a * b) / ONE;
}
