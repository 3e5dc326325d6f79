/**
 * Scenario c — memory scaling: peak RSS of `plan` at the largest size ÷ at the smallest, per
 * backend (the PostgreSQL ratio is the headline; target ≤ 1.3). It reuses the plan runs of scenario
 * a when they ran in this bench run, and runs just those two sizes otherwise.
 */
import { type BenchKit, need, round } from "./scenario-kit.ts";
import { type PlanRunFigures, planRuns } from "./scenario-plan.ts";

const TARGET = 1.3;

/** Scenario c: its JSON figures, from scenario a's runs when given. */
export async function memoryScenario(
  kit: BenchKit,
  fromPlan: readonly PlanRunFigures[] | undefined,
): Promise<Record<string, unknown>> {
  const small = Math.min(...kit.sizes);
  const large = Math.max(...kit.sizes);
  if (small === large) throw new Error("memory scaling needs two sizes (--sizes SMALL,LARGE)");
  const has = (runs: readonly PlanRunFigures[], b: string, n: number) =>
    runs.find((r) => r.backend === b && r.identities === n);
  let runs = fromPlan ?? [];
  const complete = kit.backends.every((b) => has(runs, b, small) && has(runs, b, large));
  if (!complete) runs = await planRuns(kit, [small, large], kit.backends);

  const ratios: Record<string, unknown> = {};
  for (const backend of kit.backends) {
    const lo = has(runs, backend, small)?.peak_rss_mb;
    const hi = has(runs, backend, large)?.peak_rss_mb;
    const ratio = round(
      need(hi, `${backend} peak RSS at ${large}`) / need(lo, `${backend} at ${small}`),
    );
    ratios[backend] = {
      [`peak_rss_mb_at_${small}`]: lo,
      [`peak_rss_mb_at_${large}`]: hi,
      ratio,
      // Issue 13: at most 1.1 on both backends.
      within_1_1: ratio <= 1.1,
    };
  }
  const headline = kit.backends.includes("postgres") ? "postgres" : "pglite";
  const ratio = (ratios[headline] as { ratio: number }).ratio;
  return {
    source: fromPlan && complete ? "scenario a's runs" : "plan runs made for this scenario",
    sizes: [small, large],
    headline_backend: headline,
    ratio,
    target: TARGET,
    within_target: ratio <= TARGET,
    by_backend: ratios,
  };
}
