import { normalizeEndpointRates } from "../gateway/endpoint-limits.ts";
import type { Argv } from "../shared.ts";

/**
 * `--endpoint-rate-limit PATH=RPS`, repeatable, into the override table; each problem is appended
 * to `problems`, naming the flag and the entry.
 *
 * @example
 *   endpointRatesFromArgv({ "endpoint-rate-limit": ["/v2/transfer/internal=2"] }, []);
 *   // { "/v2/transfer/internal": 2 }
 */
export function endpointRatesFromArgv(
  argv: Argv,
  problems: string[],
): Record<string, number> | undefined {
  const raw = argv["endpoint-rate-limit"];
  if (raw === undefined) return undefined;
  const table: Record<string, number> = {};
  for (const entry of (Array.isArray(raw) ? raw : [raw]).map(String)) {
    const eq = entry.lastIndexOf("=");
    const rps = eq > 0 ? Number(entry.slice(eq + 1)) : Number.NaN;
    if (eq <= 0 || entry.slice(eq + 1).trim() === "" || !Number.isFinite(rps) || rps < 0) {
      problems.push(
        `--endpoint-rate-limit takes PATH=RPS with RPS a number >= 0 (0 = unlimited), got ${JSON.stringify(entry)}.`,
      );
      return undefined;
    }
    table[entry.slice(0, eq)] = rps;
  }
  try {
    return normalizeEndpointRates(table);
  } catch (err) {
    problems.push(
      `--endpoint-rate-limit: ${(err as Error).message.replace(/^endpointRateLimits: /, "")}.`,
    );
    return undefined;
  }
}
