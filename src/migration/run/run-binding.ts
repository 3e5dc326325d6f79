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

/**
 * One key for a platform (issue 51): its API URL and token URL as given, normalised (scheme and
 * host lower-cased, a default port and a trailing slash dropped), with the client id. Runs, plans,
 * wait sightings and the cost model's estimates of one key are never used for another.
 *
 * @example
 *   platformKey({ apiUrl: "HTTPS://Api.example:443/", tokenUrl: "https://auth.example/t", clientId: "c" })
 *   // "https://api.example|https://auth.example/t|c"
 */
export function platformKey(p: {
  readonly apiUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
}): string {
  return [normalUrl(p.apiUrl), normalUrl(p.tokenUrl), p.clientId].join("|");
}

function normalUrl(text: string): string {
  try {
    const u = new URL(text);
    const path = u.pathname.replace(/\/+$/, "");
    return `${u.protocol}//${u.host}${path}${u.search}`;
  } catch {
    return text;
  }
}

/** A source as a run resolved it (`SourceIdentity`), for comparison and messages. */
export interface SourceResolved {
  readonly relation: string | null;
  readonly oid: string | null;
  readonly database: string;
}

const sourceText = (s: SourceResolved) =>
  s.relation === null
    ? `no relation (in database ${s.database})`
    : `${s.relation} (oid ${s.oid}, database ${s.database})`;

/**
 * The line naming both relations when this invocation's source resolves elsewhere than the
 * recorded one; null when it is the same relation of the same database. `sameDatabase` says
 * whether two database identities may be one database.
 *
 * @example
 *   sourceDifference(was, now, (a, b) => a === b)
 *   // "source relation: the run's public.identities (oid 16402, database …), this invocation's other.identities (…)"
 */
export function sourceDifference(
  recorded: SourceResolved,
  now: SourceResolved,
  sameDatabase: (a: string, b: string) => boolean,
): string | null {
  const same =
    recorded.relation === now.relation &&
    recorded.oid === now.oid &&
    sameDatabase(recorded.database, now.database);
  if (same) return null;
  return `source relation: the run's ${sourceText(recorded)}, this invocation's ${sourceText(now)}`;
}
