import { describe, expect, it } from "vitest";
import { TOOL_RESPONSE_ENVELOPE_PREFIX, TOOL_RESPONSE_ENVELOPE_SUFFIX } from "../../../core/index.js";
import type { TurnView } from "../../run/run-model.js";
import { formatNumber, runningTotals, violationLabel, wrappedObservation } from "./turns.js";

const withReward = (reward: number | null) => ({ reward }) as TurnView;

describe("runningTotals", () => {
  it("adds rewards turn by turn, a pending turn adding nothing", () => {
    expect(runningTotals([withReward(0.5), withReward(-1), withReward(null), withReward(2)])).toEqual([0.5, -0.5, -0.5, 1.5]);
    expect(runningTotals([])).toEqual([]);
  });
});

describe("formatNumber", () => {
  it("rounds float noise and signs on request", () => {
    expect(formatNumber(0.1 + 0.2)).toBe("0.3");
    expect(formatNumber(1, true)).toBe("+1");
    expect(formatNumber(-0.25, true)).toBe("-0.25");
    expect(formatNumber(0, true)).toBe("0");
    expect(formatNumber(-0.00001)).toBe("0");
    expect(formatNumber(Number.NaN)).toBe("NaN");
  });
});

describe("violationLabel", () => {
  it("names type, severity and locus", () => {
    expect(violationLabel({ type: "schema_args", severity: 0.5, locus: "advantage", detail: "x" })).toBe("schema_args · severity 0.5 · advantage");
  });
});

describe("wrappedObservation", () => {
  it("is null with the envelope off", () => {
    expect(wrappedObservation("ok", null, "")).toBeNull();
    expect(wrappedObservation("ok", { enabled: false, envelope: "fork", thinkingStyle: "paired" }, "")).toBeNull();
  });
  it("wraps in the fork's exact envelope", () => {
    expect(wrappedObservation("ok", { enabled: true, envelope: "fork", thinkingStyle: "paired" }, "")).toBe(
      TOOL_RESPONSE_ENVELOPE_PREFIX + "ok" + TOOL_RESPONSE_ENVELOPE_SUFFIX,
    );
  });
  it("wraps in the template's envelope, closing the assistant turn only when it is open", () => {
    const cfg = { enabled: true, envelope: "template" as const, thinkingStyle: "paired" as const };
    expect(wrappedObservation("ok", cfg, "hi", "<think>\n")).toBe(
      "<|im_end|>\n<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n",
    );
    expect(wrappedObservation("ok", cfg, "hi<|im_end|>")!.startsWith("\n<|im_start|>user")).toBe(true);
  });
});
