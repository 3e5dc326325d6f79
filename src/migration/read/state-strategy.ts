import { MAX_PAGE_SIZE } from "../../contract/index.ts";
/**
 * How the platform's state is read, and `auto`'s choice between the ways. Pure: the inputs are
 * counts the caller already holds (source counts, the previous run's listing, a first page).
 */
import { noun } from "../../plural.ts";
import { thousands } from "../../thousands.ts";

export type StateStrategy = "auto" | "bulk" | "filtered" | "per-identity";
export type ChosenStrategy = Exclude<StateStrategy, "auto">;

/** Identities per listing page, the platform's maximum. */
export const LISTING_PAGE = MAX_PAGE_SIZE;

export interface StrategyInputs {
  /** Identities on the platform: the previous bulk listing's count, else the source's rows. */
  readonly platformIdentities: number;
  /** Where `platformIdentities` comes from, for the reason ("the source's row count"). */
  readonly platformIdentitiesFrom: string;
  /** Identities holding an active SELL_ONLY; null when nothing tells. */
  readonly sellOnlyIdentities: number | null;
  /** Where `sellOnlyIdentities` comes from ("the previous run 2026…", "a first page"). */
  readonly sellOnlyFrom: string;
  /** Source rows with a flag true: what per-identity reads one by one. */
  readonly candidates: number;
  /** Creates the run may send (0 for a plan): they share the controls path with per-identity. */
  readonly writes: number;
  /** Requests per second per endpoint path (--rate). */
  readonly rate: number;
  /** --prune: the run deletes stale client controls wherever they are. */
  readonly prune: boolean;
  /**
   * Whether the strategies read by id (`GET /v2/identity/identities/{id}`) what their first read
   * leaves unknown (issue 27): filtered the candidates its listing will not show, per-identity
   * the candidates expected to lack their control (for the platform's legacy fields). False for
   * the re-read of pending actions unless it waits for the platform. Default true.
   */
  readonly readsById?: boolean;
  /**
   * Candidates known to lack their control (the re-read of pending creates, waiting for the
   * platform): filtered reads each by id, per-identity reads each by id instead of its controls
   * (the identity's answer carries both). Replaces the expectation from the SELL_ONLY holders.
   */
  readonly lackingKnown?: number;
}

export interface StrategyCosts {
  /** Listing requests on /v2/identity/identities. */
  readonly bulk: number;
  /**
   * Listing requests on /v2/identity/identities, then GETs by id of the candidates expected
   * unlisted (candidates minus SELL_ONLY holders); null when unknown.
   */
  readonly filtered: number | null;
  /**
   * GETs on /v2/identity/controls (the path the creates share), then GETs by id of the
   * candidates expected to lack their control.
   */
  readonly perIdentity: number;
  /** Of those, the GETs on /v2/identity/identities/{id}. */
  readonly byId: { readonly filtered: number | null; readonly perIdentity: number };
}

export interface StrategyChoice {
  readonly strategy: ChosenStrategy;
  /** One sentence: what was chosen and why, with the costs compared. */
  readonly reason: string;
  /**
   * One short clause for the log at info: the strategy's requests and seconds at the rate
   * (`≈ 20 requests, 0.5 s at 40 rps (auto)`); the reason goes to debug and summary.json.
   */
  readonly short: string;
  readonly costs: StrategyCosts;
}

/** Why per-identity cannot serve --prune; also the message when it is asked for explicitly. */
export const PER_IDENTITY_BLIND_TO_PRUNE =
  "per-identity reads only identities with a flag true, so it never sees a stale client control on an identity whose flags are both false, which --prune must delete";

const pages = (n: number) => Math.max(1, Math.ceil(n / LISTING_PAGE));
const fmt = thousands;
const secs = (requests: number, rate: number) => {
  const s = requests / Math.max(rate, 0.001);
  return s < 10 ? `${Math.round(s * 10) / 10} s` : `${fmt(Math.round(s))} s`;
};

/**
 * The request costs of each strategy, per rate budget. A candidate is expected to hold its
 * SELL_ONLY as often as the SELL_ONLY holders allow (all of them candidates at best): the others
 * are read by id, filtered's because its listing will not show them, per-identity's because no
 * control settles their findings. Nothing telling how many hold one, per-identity expects none.
 */
export function strategyCosts(i: StrategyInputs): StrategyCosts {
  const reads = i.readsById ?? true;
  const known = reads ? i.lackingKnown : undefined;
  const lacking = (holders: number) => known ?? (reads ? Math.max(0, i.candidates - holders) : 0);
  const filteredReads = i.sellOnlyIdentities === null ? null : lacking(i.sellOnlyIdentities);
  const perIdentityReads = lacking(i.sellOnlyIdentities ?? 0);
  return {
    bulk: pages(i.platformIdentities),
    filtered:
      i.sellOnlyIdentities === null ? null : pages(i.sellOnlyIdentities) + (filteredReads ?? 0),
    // Known lacking: read by id instead of on the controls path, not on top of it.
    perIdentity: i.candidates + (known === undefined ? perIdentityReads : 0),
    byId: { filtered: filteredReads, perIdentity: perIdentityReads },
  };
}

const BY_ID = "on /v2/identity/identities/{id}";

/** What each strategy costs, in words: one clause each for `auto`'s reason. */
function costTexts(inputs: StrategyInputs, costs: StrategyCosts) {
  const { rate } = inputs;
  const bulk = `bulk ≈ ${fmt(costs.bulk)} listing ${noun(costs.bulk, "request")} (${secs(costs.bulk, rate)} at ${rate} rps; ${fmt(inputs.platformIdentities)} ${noun(inputs.platformIdentities, "identity", "identities")}, from ${inputs.platformIdentitiesFrom})`;
  const sellOnly = inputs.sellOnlyIdentities ?? 0;
  const filteredReads = costs.byId.filtered ?? 0;
  const listing = (costs.filtered ?? 0) - filteredReads;
  const filtered =
    costs.filtered === null
      ? "filtered: unknown cost"
      : `filtered ≈ ${fmt(listing)} listing ${noun(listing, "request")}` +
        (filteredReads > 0
          ? ` + ${fmt(filteredReads)} ${noun(filteredReads, "GET")} ${BY_ID} of the candidates it will not list`
          : "") +
        ` (${secs(costs.filtered, rate)}; ${fmt(sellOnly)} ${noun(sellOnly, "identity holds", "identities hold")} a SELL_ONLY, from ${inputs.sellOnlyFrom})`;
  const byId = costs.byId.perIdentity;
  const reads = inputs.candidates - (inputs.lackingKnown !== undefined ? byId : 0);
  const per =
    `per-identity ${fmt(reads)} ${noun(reads, "GET")} on /v2/identity/controls` +
    (inputs.writes > 0
      ? `, the path the creates share, on top of up to ${fmt(inputs.writes)} creates (${secs(reads + inputs.writes, rate)} there instead of ${secs(inputs.writes, rate)})`
      : ` (${secs(reads, rate)})`) +
    (byId > 0
      ? ` + ${fmt(byId)} ${noun(byId, "GET")} ${BY_ID} for the legacy fields of the candidates expected to lack their control (${secs(byId, rate)})`
      : "");
  return { bulk, filtered, per };
}

/**
 * `auto` compares the real costs, per rate budget. A listing costs pages on
 * /v2/identity/identities, a path nothing else in the run uses: bulk N_platform/1000, filtered
 * N_with_SELL_ONLY/1000 plus one GET by id per candidate it will not list (for the platform's
 * legacy fields and the candidate's existence). Per-identity costs one GET per candidate on
 * /v2/identity/controls, the path the creates share, so its reads come on top of the writes
 * there, plus one GET by id per candidate expected to lack its control. Ties go to the strategy
 * that sees more: bulk before filtered before per-identity. A strategy blind to what the run
 * must act on is never chosen: with --prune, per-identity is out.
 *
 * @example
 *   chooseStrategy("auto", { platformIdentities: 1_000_000, platformIdentitiesFrom: "the source",
 *     sellOnlyIdentities: 60_000, sellOnlyFrom: "the previous run", candidates: 50_000,
 *     writes: 50_000, rate: 40, prune: false }).strategy; // "filtered" (60 vs 1,000 requests)
 *   // with 120,000 candidates: "bulk" (filtered 60 + 60,000 GETs by id vs 1,000)
 */
export function chooseStrategy(requested: StateStrategy, inputs: StrategyInputs): StrategyChoice {
  const chosen = weighStrategies(requested, inputs);
  const { strategy, costs } = chosen;
  const requests =
    strategy === "bulk"
      ? costs.bulk
      : strategy === "filtered"
        ? (costs.filtered ?? 0)
        : costs.perIdentity;
  const how = requested === "auto" ? "auto" : `--state ${requested}`;
  const short = `≈ ${fmt(requests)} ${noun(requests, "request")}, ${secs(requests, inputs.rate)} at ${inputs.rate} rps (${how})`;
  return { ...chosen, short };
}

/** The choice before its short line: the strategy, the reason and the costs. */
function weighStrategies(
  requested: StateStrategy,
  inputs: StrategyInputs,
): Omit<StrategyChoice, "short"> {
  const costs = strategyCosts(inputs);
  if (requested !== "auto") {
    return { strategy: requested, reason: `--state ${requested}`, costs };
  }
  const { bulk: bulkText, filtered: filteredText, per: perText } = costTexts(inputs, costs);

  const listing: { strategy: ChosenStrategy; cost: number; text: string } =
    costs.filtered !== null && costs.filtered < costs.bulk
      ? { strategy: "filtered", cost: costs.filtered, text: filteredText }
      : { strategy: "bulk", cost: costs.bulk, text: bulkText };
  const otherListing = listing.strategy === "bulk" ? filteredText : bulkText;
  if (inputs.prune) {
    return {
      strategy: listing.strategy,
      reason: `auto: ${listing.text}, not more than ${otherListing}; per-identity is ruled out: ${PER_IDENTITY_BLIND_TO_PRUNE}`,
      costs,
    };
  }
  if (costs.perIdentity < listing.cost) {
    return {
      strategy: "per-identity",
      reason: `auto: ${perText} < ${listing.text}; ${otherListing}`,
      costs,
    };
  }
  return {
    strategy: listing.strategy,
    reason: `auto: ${listing.text} ≤ ${perText}; ${otherListing}`,
    costs,
  };
}

/**
 * An estimate of how many identities hold a SELL_ONLY from the first page of each listing, both
 * in created_at order from the oldest: the filtered page spans more time in proportion to how
 * rare SELL_ONLY holders are. Null when the pages cannot tell (no span, or a listing ended).
 *
 * @example
 *   densityEstimate({ items: 1000, spanMs: 500_000 }, { items: 1000, spanMs: 30_000 }, 1_000_000)
 *   // 60,000
 */
export function densityEstimate(
  filtered: { items: number; spanMs: number },
  all: { items: number; spanMs: number },
  platformIdentities: number,
): number | null {
  if (filtered.spanMs <= 0 || all.spanMs <= 0 || filtered.items === 0 || all.items === 0) {
    return null;
  }
  const ratio = filtered.items / filtered.spanMs / (all.items / all.spanMs);
  return Math.round(Math.min(1, ratio) * platformIdentities);
}
