/**
 * A count with its thousands grouped as in English, "1,234,567": what
 * `n.toLocaleString("en-US")` prints, without its first call's cost. That call loads ICU's number
 * formatting, about 14 ms of CPU once per process, and every run that writes report.html or
 * prints a state estimate made it. A number that is not an integer is left to `toLocaleString`.
 *
 * @example
 *   thousands(1234567) // "1,234,567"
 *   thousands(-1000) // "-1,000"
 */
export function thousands(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString("en-US");
  const digits = String(Math.abs(n));
  const head = digits.length % 3 || 3;
  let out = digits.slice(0, head);
  for (let i = head; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return n < 0 || Object.is(n, -0) ? `-${out}` : out;
}
