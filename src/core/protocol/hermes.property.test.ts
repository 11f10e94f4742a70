import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SESSION_TOOLS, assessToolCalls } from "./registry.js";
import { JSON_DECODE_ERROR_PREFIX, MISSING_NAME_OR_ARGUMENTS_PREFIX, parseHermesToolCalls } from "./hermes.js";

const RUNS = 300;

const FRAGMENTS = [
  "<tool_call>",
  "</tool_call>",
  "<tool_call>\n",
  "\n</tool_call>",
  "{",
  "}",
  "[",
  "]",
  '"',
  ":",
  ",",
  '"name"',
  '"arguments"',
  '"run_shell"',
  "{}",
  "null",
  "42",
  "<think>",
  "</think>",
  "<|im_end|>",
  "\\",
  "\n",
  " ",
  "é",
  "😀",
  "\ud800",
  '{"name": "run_shell", "arguments": {"command": "ls"}}',
];

/** Strings built from protocol fragments and arbitrary (full Unicode) text. */
const fragmentText = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: "binary", maxLength: 8 }), fc.string({ maxLength: 8 })), {
    maxLength: 24,
  })
  .map((parts) => parts.join(""));

/** Well-formed calls around arbitrary text, so the success path is exercised too. */
const wellFormed = fc
  .tuple(
    fc.string({ maxLength: 12 }),
    fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }))), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .filter(([lead]) => !lead.includes("<tool_call>"))
  .map(([lead, calls]) => ({
    lead,
    calls,
    text: lead + calls.map(([name, args]) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`).join(""),
  }));

describe("parseHermesToolCalls properties", () => {
  it("never throws and is self-consistent on arbitrary fragment strings", () => {
    fc.assert(
      fc.property(fc.oneof(fragmentText, fc.string({ unit: "binary" })), (text) => {
        const r = parseHermesToolCalls(text);
        expect(r.attempted).toBe(r.tools_called || r.error !== null);
        expect(r.attempted).toBe(r.tools_called || text.includes("<tool_call>"));
        if (!text.includes("<tool_call>")) {
          expect(r).toMatchObject({ tools_called: false, error: null, content: text, tool_calls: [] });
        }
        if (r.tools_called) {
          expect(r.error).toBeNull();
          expect(r.tool_calls.length).toBe(r.regions.length);
          const leading = text.slice(0, text.indexOf("<tool_call>"));
          expect(r.content).toBe(leading === "" ? null : leading);
          for (const c of r.tool_calls) expect(typeof c.arguments_json).toBe("string");
        } else {
          expect(r.tool_calls).toEqual([]);
          expect(r.content).toBe(text);
          if (r.error !== null) {
            expect(r.error.startsWith(JSON_DECODE_ERROR_PREFIX) || r.error.startsWith(MISSING_NAME_OR_ARGUMENTS_PREFIX)).toBe(
              true,
            );
          }
        }
        for (const g of r.regions) {
          expect(text.slice(g.start, g.start + "<tool_call>".length)).toBe("<tool_call>");
          expect(g.end).toBeLessThanOrEqual(text.length);
        }
        // The assessment built on it never throws either.
        const a = assessToolCalls(text, SESSION_TOOLS);
        expect(a.attempted).toBe(r.attempted);
        expect(a.has_valid_call).toBe(a.valid_calls.length > 0);
        if (a.malformed) expect(a.reason).not.toBeNull();
      }),
      { numRuns: RUNS },
    );
  });

  it("extracts well-formed calls exactly, with the leading text as content", () => {
    fc.assert(
      fc.property(wellFormed, ({ lead, calls, text }) => {
        const r = parseHermesToolCalls(text);
        // A name or argument that itself contains a tag can split regions; only check clean ones.
        fc.pre(!calls.some(([n, a]) => JSON.stringify([n, a]).includes("tool_call>")));
        expect(r.tools_called).toBe(true);
        expect(r.error).toBeNull();
        expect(r.content).toBe(lead === "" ? null : lead);
        expect(r.tool_calls.map((c) => c.name)).toEqual(calls.map(([n]) => n));
        expect(r.tool_calls.map((c) => c.arguments)).toEqual(calls.map(([, a]) => JSON.parse(JSON.stringify(a))));
        // arguments_json is JSON of the same value.
        for (const c of r.tool_calls) expect(JSON.parse(c.arguments_json)).toEqual(c.arguments);
      }),
      { numRuns: RUNS },
    );
  });
});
