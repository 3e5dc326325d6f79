/**
 * The bad-input corpus: nasty legacy source rows and platform states, each with the finding and
 * reason the tool must give it. The e2e corpus test loads it into a real database and an in-process
 * sandbox, runs the CLI, and checks every case in the findings table and in diff.csv.
 *
 * @example
 *   for (const c of CORPUS) for (const r of c.rows) await insertRow(db, r);
 *   craftPlatform(sandbox, CORPUS);
 *   const want = expectedFindings(CORPUS[0]!, "warn"); // [{ finding: "invalid_source_row", ... }]
 */
import type { AddControlInput, Sandbox } from "controls-sandbox";
import { prng, uuidFrom } from "../../src/contract/index.ts";

export type Policy = "warn" | "reject";

export interface CorpusRow {
  readonly id: string | null;
  readonly ud: boolean | null;
  readonly ad: boolean | null;
}

export interface ExpectedFinding {
  readonly finding: string;
  /** Matched against the findings table's `detail` and diff.csv's `outcome` (plan runs). */
  readonly detail: RegExp;
  readonly other?: string;
  readonly observedSetBy?: string;
  /** diff.csv's `action` cell in a plan ("" for report only). */
  readonly action?: string;
}

export interface CorpusCase {
  readonly key: string;
  readonly rows: readonly CorpusRow[];
  /** The platform knows this identity (with these flags and controls). */
  readonly platform?: {
    readonly id: string;
    readonly ud: boolean;
    readonly ad: boolean;
    readonly controls?: readonly AddControlInput[];
  };
  /** Findings under `--non-uuid-ids warn` (the default). */
  readonly warn: readonly ExpectedFinding[];
  /** Findings under `--non-uuid-ids reject`; the warn ones when absent. */
  readonly reject?: readonly ExpectedFinding[];
  /** The id is clean but not a UUID: a warn-level anomaly with this detail (kept, acted on). */
  readonly nonUuidWarning?: RegExp;
  /** apply creates a client SELL_ONLY for the platform identity under this policy. */
  readonly creates?: readonly Policy[];
}

const rand = prng(20_240_601);
const uuid = () => uuidFrom(rand);
const U = Object.fromEntries([..."abcdefghijklmnopqrstuvwx"].map((k) => [k, uuid()])) as Record<
  string,
  string
>;

const invalid = (detail: RegExp): ExpectedFinding => ({ finding: "invalid_source_row", detail });
/** The reader previews ids cut to 60 characters, so only that prefix (without its closing quote). */
const rejected = (id: string): ExpectedFinding =>
  invalid(
    new RegExp(`^non_uuid_id: id ${escapeRegExp(JSON.stringify(id.slice(0, 60)).slice(0, -1))}`),
  );
const notFound: ExpectedFinding = {
  finding: "identity_not_found",
  detail: /absent from a complete listing|not found/,
};
const missingClient = (other?: string): ExpectedFinding => ({
  finding: "missing_client_control",
  detail: /^user_disabled is true$/,
  ...(other ? { other } : {}),
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const sellOnly = (set_by: string, is_overridable: boolean, deleted = false): AddControlInput => ({
  type: "SELL_ONLY",
  set_by,
  is_overridable,
  deleted,
});

const QUOTE_ID = `o'brien"; drop table identities; --`;
const UNICODE_ID = "ídentité-ünïcödé-用户-😀";
const FORMULA_IDS = ['=HYPERLINK("http://evil.example","click me")', "+1", "-1", "@x"];

/** One row, the platform knowing the same id with user_disabled true and no control. */
const knownFlagged = (key: string, row: CorpusRow, platformId: string) => ({
  key,
  rows: [row],
  platform: { id: platformId, ud: true, ad: false },
});

/** Rows of the boolean source relation `identities`. */
export const CORPUS: readonly CorpusCase[] = [
  {
    ...knownFlagged("NULL user_disabled", { id: U.a!, ud: null, ad: false }, U.a!),
    warn: [invalid(/^null_flag: user_disabled is NULL$/)],
  },
  {
    ...knownFlagged("NULL admin_disabled", { id: U.b!, ud: true, ad: null }, U.b!),
    warn: [invalid(/^null_flag: admin_disabled is NULL$/)],
  },
  {
    ...knownFlagged("both flags NULL", { id: U.c!, ud: null, ad: null }, U.c!),
    warn: [invalid(/^null_flag: user_disabled is NULL; admin_disabled is NULL$/)],
  },
  {
    key: "NULL id",
    rows: [{ id: null, ud: true, ad: false }],
    warn: [invalid(/^null_id: id is NULL$/)],
  },
  {
    key: "empty id",
    rows: [{ id: "", ud: true, ad: false }],
    warn: [invalid(/^empty_id: id is ""$/)],
  },
  {
    key: "whitespace-only id",
    rows: [{ id: " \u3000  ", ud: true, ad: false }],
    warn: [invalid(/^empty_id: id is " \u3000 {2}"$/)],
  },
  {
    key: "id over 256 characters",
    rows: [{ id: "a".repeat(257), ud: true, ad: false }],
    warn: [invalid(/^id_too_long: id has 257 characters: "a{60}…"$/)],
  },
  {
    key: "id of exactly 256 characters",
    rows: [{ id: "b".repeat(256), ud: true, ad: false }],
    warn: [notFound],
    reject: [rejected("b".repeat(256))],
    nonUuidWarning: /^id "b{60}…" is not a UUID$/,
  },
  {
    ...knownFlagged("non-UUID id", { id: "legacy-1001", ud: true, ad: false }, "legacy-1001"),
    warn: [missingClient()],
    reject: [rejected("legacy-1001")],
    nonUuidWarning: /^id "legacy-1001" is not a UUID$/,
    creates: ["warn"],
  },
  {
    ...knownFlagged("upper-case UUID", { id: U.d!.toUpperCase(), ud: true, ad: false }, U.d!),
    warn: [notFound],
    reject: [invalid(/^non_uuid_id: id "[0-9A-F-]{36}" is a UUID with upper-case letters/)],
    nonUuidWarning: /is a UUID with upper-case letters; platform ids are lower-case$/,
  },
  {
    ...knownFlagged("UUID padded with spaces", { id: ` ${U.q} `, ud: true, ad: false }, U.q!),
    warn: [notFound],
    reject: [rejected(` ${U.q} `)],
    nonUuidWarning: /is not a UUID$/,
  },
  {
    key: "duplicate id",
    rows: [
      { id: U.e!, ud: true, ad: false },
      { id: U.e!, ud: false, ad: false },
    ],
    platform: { id: U.e!, ud: true, ad: false },
    warn: [
      invalid(/^duplicate_id: id appears on 2 rows$/),
      invalid(/^duplicate_id: id appears on 2 rows$/),
    ],
  },
  {
    ...knownFlagged(
      "id with quotes and a semicolon",
      { id: QUOTE_ID, ud: true, ad: false },
      QUOTE_ID,
    ),
    warn: [missingClient()],
    reject: [rejected(QUOTE_ID)],
    nonUuidWarning: /is not a UUID$/,
    creates: ["warn"],
  },
  {
    ...knownFlagged("unicode id", { id: UNICODE_ID, ud: true, ad: false }, UNICODE_ID),
    warn: [missingClient()],
    reject: [rejected(UNICODE_ID)],
    nonUuidWarning: /is not a UUID$/,
    creates: ["warn"],
  },
  {
    ...knownFlagged("id with a tab", { id: "tab\there", ud: true, ad: false }, "tab\there"),
    warn: [invalid(/^control_chars_in_id: id is "tab\\there"$/)],
  },
  {
    ...knownFlagged("id with a newline", { id: "line\nbreak", ud: true, ad: false }, "line\nbreak"),
    warn: [invalid(/^control_chars_in_id: id is "line\\nbreak"$/)],
  },
  {
    ...knownFlagged(
      "id with a DEL character",
      { id: "del\u007f", ud: true, ad: false },
      "del\u007f",
    ),
    warn: [invalid(/^control_chars_in_id: id is "del\\u007f"$/)],
  },
  {
    ...knownFlagged(
      "id with a terminal escape and a bell",
      { id: "esc\u001b[31mred\u0007", ud: true, ad: false },
      "esc\u001b[31mred\u0007",
    ),
    warn: [invalid(/^control_chars_in_id: id is "esc\\u001b\[31mred\\u0007"$/)],
  },
  {
    ...knownFlagged(
      "id with a right-to-left override",
      { id: "user\u202Efdp.exe", ud: true, ad: false },
      "user\u202Efdp.exe",
    ),
    warn: [invalid(/^bidi_controls_in_id: id is "user\\u202efdp\.exe"$/)],
  },
  {
    ...knownFlagged(
      "id with a bidi isolate",
      { id: "a\u2067b\u2069c", ud: true, ad: false },
      "a\u2067b\u2069c",
    ),
    warn: [invalid(/^bidi_controls_in_id: id is "a\\u2067b\\u2069c"$/)],
  },
  ...FORMULA_IDS.map(
    (id): CorpusCase => ({
      key: `spreadsheet-formula id ${id}`,
      rows: [{ id, ud: true, ad: false }],
      warn: [notFound],
      reject: [rejected(id)],
      nonUuidWarning: /is not a UUID$/,
    }),
  ),
  {
    key: "identity unknown to the platform",
    rows: [{ id: U.f!, ud: true, ad: false }],
    warn: [notFound],
  },
  {
    key: "identity holding a FROZEN control",
    rows: [{ id: U.g!, ud: true, ad: false }],
    platform: { id: U.g!, ud: true, ad: false, controls: [{ type: "FROZEN", set_by: "SERVICE" }] },
    warn: [missingClient("FROZEN:SERVICE")],
    creates: ["warn", "reject"],
  },
  {
    key: "identity holding a CLOSED control",
    rows: [{ id: U.h!, ud: true, ad: false }],
    platform: { id: U.h!, ud: true, ad: false, controls: [{ type: "CLOSED", set_by: "CLIENT" }] },
    warn: [missingClient("CLOSED:CLIENT")],
    creates: ["warn", "reject"],
  },
  {
    key: "identity holding a DORMANT control",
    rows: [{ id: U.i!, ud: false, ad: true }],
    platform: { id: U.i!, ud: false, ad: true, controls: [{ type: "DORMANT", set_by: "CLIENT" }] },
    warn: [
      {
        // The platform's own admin_disabled is true too: its migration will create the control.
        finding: "awaiting_platform_migration",
        detail:
          /^admin_disabled is true here and on the platform: its own migration will create the SERVICE SELL_ONLY$/,
        other: "DORMANT:CLIENT",
      },
    ],
  },
  {
    key: "unflagged identity holding FROZEN and CLOSED controls",
    rows: [{ id: U.j!, ud: false, ad: false }],
    platform: {
      id: U.j!,
      ud: false,
      ad: false,
      controls: [
        { type: "FROZEN", set_by: "SERVICE" },
        { type: "CLOSED", set_by: "CLIENT" },
      ],
    },
    warn: [],
  },
  {
    key: "client SELL_ONLY that is not overridable",
    rows: [{ id: U.k!, ud: true, ad: false }],
    platform: { id: U.k!, ud: true, ad: false, controls: [sellOnly("CLIENT", false)] },
    warn: [
      {
        finding: "attribute_mismatch",
        detail: /found SELL_ONLY set_by CLIENT is_overridable false$/,
        observedSetBy: "CLIENT",
      },
    ],
  },
  {
    key: "SELL_ONLY with an unknown set_by",
    rows: [{ id: U.l!, ud: true, ad: false }],
    platform: { id: U.l!, ud: true, ad: false, controls: [sellOnly("SET_BY_PARTNER", true)] },
    warn: [
      {
        finding: "attribute_mismatch",
        detail: /found SELL_ONLY set_by SET_BY_PARTNER is_overridable true$/,
        observedSetBy: "SET_BY_PARTNER",
      },
    ],
  },
  {
    key: "SET_BY_CLIENT spelling",
    rows: [{ id: U.m!, ud: true, ad: false }],
    platform: { id: U.m!, ud: true, ad: false, controls: [sellOnly("SET_BY_CLIENT", true)] },
    warn: [{ finding: "in_sync", detail: /^$/, observedSetBy: "SET_BY_CLIENT" }],
  },
  {
    key: "SET_BY_SERVICE spelling",
    rows: [{ id: U.n!, ud: false, ad: true }],
    platform: { id: U.n!, ud: false, ad: true, controls: [sellOnly("SET_BY_SERVICE", false)] },
    warn: [{ finding: "in_sync", detail: /^$/, observedSetBy: "SET_BY_SERVICE" }],
  },
  {
    key: "deleted client control",
    rows: [{ id: U.o!, ud: true, ad: false }],
    platform: { id: U.o!, ud: true, ad: false, controls: [sellOnly("CLIENT", true, true)] },
    warn: [missingClient()],
    creates: ["warn", "reject"],
  },
  {
    key: "two active client SELL_ONLY controls",
    rows: [{ id: U.p!, ud: true, ad: false }],
    platform: {
      id: U.p!,
      ud: true,
      ad: false,
      controls: [sellOnly("CLIENT", true), sellOnly("CLIENT", true)],
    },
    warn: [
      { finding: "in_sync", detail: /^$/, observedSetBy: "CLIENT" },
      {
        finding: "duplicate_client_control",
        detail: /^a second active CLIENT SELL_ONLY \(duplicate\)$/,
        observedSetBy: "CLIENT",
        action: "delete_with_prune",
      },
    ],
  },
  {
    key: "a SERVICE SELL_ONLY where a CLIENT one is expected",
    rows: [{ id: U.u!, ud: true, ad: false }],
    platform: { id: U.u!, ud: true, ad: false, controls: [sellOnly("SERVICE", false)] },
    warn: [
      { ...missingClient(), action: "create" },
      {
        finding: "unexpected_service_control",
        detail: /^admin_disabled is false but the platform holds SELL_ONLY set_by SERVICE/,
        observedSetBy: "SERVICE",
        action: "",
      },
    ],
    creates: ["warn", "reject"],
  },
  {
    key: "a CLIENT SELL_ONLY where a SERVICE one is expected (the identity's only restriction)",
    rows: [{ id: U.v!, ud: false, ad: true }],
    platform: { id: U.v!, ud: false, ad: true, controls: [sellOnly("CLIENT", true)] },
    warn: [
      {
        // The platform's own admin_disabled is true too: its migration will create the control.
        finding: "awaiting_platform_migration",
        detail:
          /^admin_disabled is true here and on the platform: its own migration will create the SERVICE SELL_ONLY$/,
      },
      {
        finding: "unexpected_client_control",
        detail: /^kept: identity must stay restricted$/,
        observedSetBy: "CLIENT",
        action: "",
      },
    ],
  },
  {
    key: "service SELL_ONLY that is overridable",
    rows: [{ id: U.w!, ud: false, ad: true }],
    platform: { id: U.w!, ud: false, ad: true, controls: [sellOnly("SERVICE", true)] },
    warn: [
      {
        finding: "attribute_mismatch",
        detail: /found SELL_ONLY set_by SERVICE is_overridable true$/,
        observedSetBy: "SERVICE",
      },
    ],
  },
  {
    key: "SELL_ONLY with an unknown set_by where a SERVICE one is expected",
    rows: [{ id: U.x!, ud: false, ad: true }],
    platform: { id: U.x!, ud: false, ad: true, controls: [sellOnly("SET_BY_PARTNER", false)] },
    warn: [
      {
        finding: "attribute_mismatch",
        detail: /^expected SELL_ONLY set_by SERVICE .*found SELL_ONLY set_by SET_BY_PARTNER/,
        observedSetBy: "SET_BY_PARTNER",
      },
    ],
  },
];

/** The identity whose duplicate control `reconcile --prune` deletes; nothing else is deleted. */
export const DUPLICATE_CONTROLS_ID = U.p!;

/** Rows of the text-typed relation `legacy_text_flags` (flags stored as free text). */
export const TEXT_FLAG_CASES: readonly {
  readonly key: string;
  readonly row: { id: string; ud: string | null; ad: string | null };
  readonly expected: ExpectedFinding;
}[] = [
  {
    key: "a user_disabled of 'maybe'",
    row: { id: U.r!, ud: "maybe", ad: "false" },
    expected: invalid(/^invalid_flag: user_disabled is "maybe"$/),
  },
  {
    key: "an admin_disabled of '2'",
    row: { id: U.s!, ud: "true", ad: "2" },
    expected: invalid(/^invalid_flag: admin_disabled is "2"$/),
  },
  {
    key: "a user_disabled of ' YES ' (read as true)",
    row: { id: U.t!, ud: " YES ", ad: "0" },
    expected: missingClient(),
  },
];

/** Platform identities of the text-flag relation (all known to the platform, no controls). */
export const TEXT_FLAG_PLATFORM_IDS = [U.r!, U.s!, U.t!];

/** The findings a case must produce under `policy`. */
export function expectedFindings(c: CorpusCase, policy: Policy): readonly ExpectedFinding[] {
  if (policy === "reject") return c.reject ?? c.warn;
  if (!c.nonUuidWarning) return c.warn;
  // A row kept despite the warning is also reported as a source_warning carrying the reason.
  const src = c.nonUuidWarning.source;
  const reason = src.startsWith("^") ? src.slice(1) : `.*${src}`;
  return [...c.warn, { finding: "source_warning", detail: new RegExp(`^non_uuid_id: ${reason}`) }];
}

/** Seeds the sandbox with every platform identity of the corpus and its controls. */
export function craftPlatform(sandbox: Sandbox, corpus: readonly CorpusCase[]): void {
  const identities = corpus.flatMap((c) =>
    c.platform
      ? [{ id: c.platform.id, user_disabled: c.platform.ud, admin_disabled: c.platform.ad }]
      : [],
  );
  for (const id of TEXT_FLAG_PLATFORM_IDS)
    identities.push({ id, user_disabled: true, admin_disabled: false });
  sandbox.seedIdentities(identities, { migratedFraction: 0, driftFraction: 0 });
  for (const c of corpus) {
    for (const control of c.platform?.controls ?? []) sandbox.addControl(c.platform!.id, control);
  }
}

/**
 * A small RFC 4180 reader (quoted cells, doubled quotes, line breaks inside quotes), enough for
 * diff.csv; returns one record per row keyed by the header.
 */
export function parseCsv(text: string): Record<string, string>[] {
  const records: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(cell);
      cell = "";
    } else if (ch === "\n" || (ch === "\r" && text[i + 1] === "\n")) {
      if (ch === "\r") i++;
      row.push(cell);
      records.push(row);
      row = [];
      cell = "";
    } else cell += ch;
  }
  if (cell !== "" || row.length > 0) {
    row.push(cell);
    records.push(row);
  }
  const [header, ...body] = records;
  if (!header) return [];
  return body.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ""])));
}
