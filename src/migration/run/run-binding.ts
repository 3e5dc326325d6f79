/**
 * A run is bound to the platform and source it started with: a resume pointed elsewhere would
 * check its creates in doubt against the wrong platform, or read another relation's flags. Pure:
 * it compares the options recorded with the run (`runs.options`, secret-free) with this
 * invocation's.
 */

/** What binds a run: the platform it writes to and the source it reads. */
export interface RunBinding {
  readonly api_url: string;
  readonly token_url: string;
  readonly client_id: string;
  readonly source: {
    readonly relation: string;
    readonly idColumn: string;
    readonly userDisabledColumn: string;
    readonly adminDisabledColumn: string;
  };
}

const LABELS: Record<string, string> = {
  api_url: "API URL (--api-url)",
  token_url: "token URL (--token-url)",
  client_id: "client id (--client-id)",
  relation: "source relation (--source-relation)",
  idColumn: "id column (--source-id-column)",
  userDisabledColumn: "user_disabled column (--source-user-disabled-column)",
  adminDisabledColumn: "admin_disabled column (--source-admin-disabled-column)",
};

const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * What differs between the run's recorded binding and this invocation's, one line each naming
 * both values; empty when the resume points where the run started. A setting the run did not
 * record (a run of an older version) is not compared.
 *
 * @example
 *   bindingDifferences({ api_url: "https://a" }, { ...now, api_url: "https://b" })
 *   // ["API URL (--api-url): the run's https://a, this invocation's https://b"]
 */
export function bindingDifferences(recorded: Record<string, unknown>, now: RunBinding): string[] {
  const out: string[] = [];
  const compare = (key: string, was: unknown, is: unknown) => {
    if (was === undefined || was === null) return;
    if (text(was) !== text(is)) {
      out.push(`${LABELS[key] ?? key}: the run's ${text(was)}, this invocation's ${text(is)}`);
    }
  };
  for (const key of ["api_url", "token_url", "client_id"] as const) {
    compare(key, recorded[key], now[key]);
  }
  const source = (recorded.source ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(now.source) as (keyof RunBinding["source"])[]) {
    compare(key, source[key], now.source[key]);
  }
  return out;
}
