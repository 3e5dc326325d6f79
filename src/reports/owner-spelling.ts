/**
 * One spelling of each owner in every report. The platform accepts and returns both `CLIENT` and
 * `SET_BY_CLIENT` (and the same for SERVICE); reports show the short one, so that a missing
 * finding's `CLIENT` and an unexpected one's observed owner read the same.
 *
 * @example
 *   ownerSpelling("FROZEN:SET_BY_SERVICE;SELL_ONLY:CLIENT") // "FROZEN:SERVICE;SELL_ONLY:CLIENT"
 */
export function ownerSpelling(text: string): string {
  return text.replace(/\bSET_BY_(CLIENT|SERVICE)\b/g, "$1");
}
