import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assessAssistantTurn, detectMalformedThinking } from "./invalid-action.js";

const RUNS = 300;

const FRAGMENTS = ["<think>", "</think>", "<think", "think>", "</", "<tool_call>", "</tool_call>", "{", '"name"', "\n", "é", "😀"];

const text = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: "binary", maxLength: 6 }), fc.string({ maxLength: 6 })), {
    maxLength: 20,
  })
  .map((parts) => parts.join(""));

const tagPair = fc.oneof(
  fc.constant(["<think>", "</think>"]),
  fc.constant(["[REASON]", "[/REASON]"]),
  fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), fc.string({ minLength: 1, maxLength: 5 })),
);

/** Python's str.count for a non-empty needle (non-overlapping, left to right). */
const count = (s: string, needle: string) => s.split(needle).length - 1;

describe("detectMalformedThinking properties", () => {
  it("never throws for a valid pair and style, and follows the counting rule", () => {
    fc.assert(
      fc.property(text, tagPair, fc.constantFrom("paired", "closing_only"), (t, [open, close], style) => {
        const malformed = detectMalformedThinking(t, [open!, close!], style);
        const nClose = count(t, close!);
        const nOpen = count(t.split(close!).join(""), open!);
        const expected =
          style === "closing_only" ? nOpen > 0 || nClose > 1 : !(nOpen === 0 && nClose === 0) && (nOpen !== nClose || nOpen > 1);
        expect(malformed).toBe(expected);
      }),
      { numRuns: RUNS },
    );
  });

  it("treats text without any tag as well formed, and one leading pair as well formed when paired", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
        fc.pre(!`${a}${b}`.includes("<think>") && !`${a}${b}`.includes("</think>"));
        fc.pre(!`${a}${b}`.includes("<think") && !`${a}${b}`.includes("think>"));
        expect(detectMalformedThinking(a + b)).toBe(false);
        expect(detectMalformedThinking(a + b, undefined, "closing_only")).toBe(false);
        expect(detectMalformedThinking(`<think>${a}</think>${b}`)).toBe(false);
        expect(detectMalformedThinking(`${a}</think>${b}`, undefined, "closing_only")).toBe(false);
        expect(detectMalformedThinking(`<think>${a}</think>${b}`, undefined, "closing_only")).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it("assessAssistantTurn never throws and yields at most one violation of each kind", () => {
    fc.assert(
      fc.property(
        text,
        fc.record({ invalid_action: fc.boolean(), malformed_thinking: fc.boolean() }),
        fc.constantFrom("paired", "closing_only"),
        (t, md, style) => {
          const v = assessAssistantTurn(
            t,
            { enabled: true, invalid_tool_call_patterns: ["<tool_call>"], invalid_action_penalty: 1 },
            md,
            style,
          );
          expect(v.violations.length).toBeLessThanOrEqual(2);
          expect(v.invalid_action).toBe(md.invalid_action || t.includes("<tool_call>"));
          expect(v.malformed_thinking).toBe(md.malformed_thinking || detectMalformedThinking(t, undefined, style));
        },
      ),
      { numRuns: RUNS },
    );
  });
});
