import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type DailyWindow,
  insideWindow,
  nextWindowChange,
  parseDailyWindow,
} from "../../src/daily-window.ts";

const window = (text: string): DailyWindow => {
  const w = parseDailyWindow(text);
  assert.equal(typeof w, "object", String(w));
  return w as DailyWindow;
};
/** Local time on a fixed day, whatever the machine's time zone. */
const at = (h: number, m: number, day = 10) => new Date(2026, 2, day, h, m, 0, 0);

describe("parseDailyWindow", () => {
  it("reads HH:MM-HH:MM into minutes since midnight and normalises the text", () => {
    assert.deepEqual(parseDailyWindow("9:05-17:30"), {
      text: "09:05-17:30",
      startMin: 545,
      endMin: 1050,
    });
    assert.deepEqual(parseDailyWindow(" 22:00 - 06:00 "), {
      text: "22:00-06:00",
      startMin: 1320,
      endMin: 360,
    });
  });

  it("says what is wrong with an hour, a minute, a shape or an empty window", () => {
    for (const bad of ["24:00-06:00", "22:60-06:00", "22-06", "22:00", "ten-eleven", ""]) {
      assert.match(String(parseDailyWindow(bad)), /must be HH:MM-HH:MM/, bad);
    }
    assert.match(String(parseDailyWindow("08:00-08:00")), /empty window/);
  });
});

describe("insideWindow", () => {
  it("includes the start and excludes the end of a window within one day", () => {
    const w = window("09:00-17:00");
    assert.equal(insideWindow(w, at(8, 59)), false);
    assert.equal(insideWindow(w, at(9, 0)), true);
    assert.equal(insideWindow(w, at(16, 59)), true);
    assert.equal(insideWindow(w, at(17, 0)), false);
  });

  it("wraps a window past midnight", () => {
    const w = window("22:00-06:00");
    assert.equal(insideWindow(w, at(21, 59)), false);
    assert.equal(insideWindow(w, at(22, 0)), true);
    assert.equal(insideWindow(w, at(23, 59)), true);
    assert.equal(insideWindow(w, at(0, 0)), true);
    assert.equal(insideWindow(w, at(5, 59)), true);
    assert.equal(insideWindow(w, at(6, 0)), false);
    assert.equal(insideWindow(w, at(12, 0)), false);
  });
});

describe("nextWindowChange", () => {
  it("is the next opening from outside, the next closing from inside, across midnight", () => {
    const w = window("22:00-06:00");
    assert.deepEqual(nextWindowChange(w, at(12, 0)), at(22, 0));
    assert.deepEqual(nextWindowChange(w, at(23, 0)), at(6, 0, 11));
    assert.deepEqual(nextWindowChange(w, at(1, 0)), at(6, 0));
    assert.deepEqual(nextWindowChange(w, at(6, 0)), at(22, 0));
    assert.deepEqual(nextWindowChange(w, at(22, 0)), at(6, 0, 11));
  });
});
