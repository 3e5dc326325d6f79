import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderThreeWaySection, threeWaySummary } from "../../src/reports/three-way-section.ts";

describe("the three-way table of summary.json and summary.md", () => {
  const cells = [
    {
      flag: "user_disabled",
      source: true,
      platform: true,
      finding: "awaiting_platform_migration",
      count: 3,
    },
    {
      flag: "admin_disabled",
      source: true,
      platform: true,
      finding: "awaiting_platform_migration",
      count: 2,
    },
    {
      flag: "user_disabled",
      source: false,
      platform: true,
      finding: "platform_will_restrict",
      count: 4,
    },
    {
      flag: "user_disabled",
      source: true,
      platform: false,
      finding: "missing_client_control",
      count: 5,
    },
  ] as const;

  it("says what the platform will still do by itself: CLIENT and SERVICE controls to create, cleared identities to restrict", () => {
    assert.deepEqual(threeWaySummary(cells)?.platform_will, {
      create_client_controls: 3,
      create_service_controls: 2,
      restrict_cleared_identities: 4,
    });
  });

  it("is absent when the run read no legacy field", () => {
    assert.equal(threeWaySummary([]), null);
    assert.deepEqual(renderThreeWaySection(null), []);
  });

  it("renders one markdown row per cell with L, P, finding and count, and the platform's work left", () => {
    const md = renderThreeWaySection(threeWaySummary(cells)).join("\n");
    assert.match(md, /\| user_disabled \| false \| true \| `platform_will_restrict` \| 4 \|/);
    assert.match(md, /\| admin_disabled \| true \| true \| `awaiting_platform_migration` \| 2 \|/);
    assert.match(
      md,
      /will still create 3 CLIENT and 2 SERVICE SELL_ONLY controls, and restrict 4 identities/,
    );
  });
});
