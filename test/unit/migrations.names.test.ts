import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { migrations } from "../../migrations/index.ts";
import { MIGRATION_NAMES } from "../../migrations/names.ts";

describe("migrations/names.ts", () => {
  it("lists exactly the migrations of migrations/index.ts, in the same order", () => {
    const known = Object.keys(migrations);
    assert.ok(known.length > 0);
    assert.deepEqual(
      [...MIGRATION_NAMES],
      known,
      "add the new migration's name to migrations/names.ts (status compares it with the database)",
    );
  });
});
