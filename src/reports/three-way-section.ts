/**
 * The three-way table of a run (issue 27): its findings counted per flag, source value (L),
 * platform legacy field (P) and finding, and what the platform's own migration will still do by
 * itself. summary.json carries it as `three_way`, summary.md as a section.
 */

/** One cell: a flag's L and P values and a finding, with its count. */
export interface ThreeWayCellFigure {
  readonly flag: "user_disabled" | "admin_disabled";
  /** The source's flag; null when the source row is not valid. */
  readonly source: boolean | null;
  /** The platform's legacy field as read. */
  readonly platform: boolean | null;
  readonly finding: string;
  readonly count: number;
}

export interface ThreeWaySummary {
  readonly cells: readonly ThreeWayCellFigure[];
  /** What the platform will still do by itself, from the findings that say so. */
  readonly platform_will: {
    /** CLIENT SELL_ONLY its migration will create (`awaiting_platform_migration`, client). */
    readonly create_client_controls: number;
    /** SERVICE SELL_ONLY its migration will create (`awaiting_platform_migration`, service). */
    readonly create_service_controls: number;
    /** Identities the client cleared that it will restrict (`platform_will_restrict`). */
    readonly restrict_cleared_identities: number;
  };
}

/**
 * The summary's three-way part from the counted cells; null when the run read no legacy field
 * (a per-identity read, or a summary of a platform that does not send them).
 *
 * @example
 *   threeWaySummary([{ flag: "user_disabled", source: true, platform: true,
 *     finding: "awaiting_platform_migration", count: 3 }])?.platform_will.create_client_controls // 3
 */
export function threeWaySummary(cells: readonly ThreeWayCellFigure[]): ThreeWaySummary | null {
  if (cells.length === 0) return null;
  const sum = (test: (c: ThreeWayCellFigure) => boolean) =>
    cells.filter(test).reduce((n, c) => n + c.count, 0);
  const awaiting = (flag: ThreeWayCellFigure["flag"]) =>
    sum((c) => c.finding === "awaiting_platform_migration" && c.flag === flag);
  return {
    cells,
    platform_will: {
      create_client_controls: awaiting("user_disabled"),
      create_service_controls: awaiting("admin_disabled"),
      restrict_cleared_identities: sum((c) => c.finding === "platform_will_restrict"),
    },
  };
}

const yn = (v: boolean | null) => (v === null ? "?" : v ? "true" : "false");

/**
 * summary.md's section: the table (flag, L, P, finding, count) and the platform's own work left.
 *
 * @example
 *   renderThreeWaySection(summary).join("\n")
 */
export function renderThreeWaySection(t: ThreeWaySummary | null | undefined): string[] {
  if (!t) return [];
  const w = t.platform_will;
  return [
    "",
    "## Three-way: source (L), the platform's legacy field (P), its controls",
    "",
    "| flag | L | P | finding | count |",
    "|---|---|---|---|---|",
    ...t.cells.map(
      (c) => `| ${c.flag} | ${yn(c.source)} | ${yn(c.platform)} | \`${c.finding}\` | ${c.count} |`,
    ),
    "",
    `The platform's own migration will still create ${w.create_client_controls} CLIENT and ${w.create_service_controls} SERVICE SELL_ONLY controls, and restrict ${w.restrict_cleared_identities} identities the client has cleared.`,
  ];
}
