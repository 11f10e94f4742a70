import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonKeepingOrder, pyEntries } from "./ordered-json.js";

/** A JSON value written from ordered entries (the model's text), and how Python's json.dumps writes it back. */
type Written = { text: string; python: string };
const key = fc.oneof(fc.constantFrom("0", "1", "2", "10", "a", "__proto__", "length", "é", "-1", "01"), fc.string({ maxLength: 4 }));
const written: fc.Arbitrary<Written> = fc.letrec<{ value: Written }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom<Written>({ text: "null", python: "null" }, { text: "true", python: "true" }, { text: "3", python: "3" }, { text: '"x"', python: '"x"' }),
    fc.array(tie("value"), { maxLength: 3 }).map((items) => ({ text: `[${items.map((i) => i.text).join(",")}]`, python: `[${items.map((i) => i.python).join(", ")}]` })),
    fc.array(fc.tuple(key, tie("value")), { maxLength: 5 }).map((entries) => {
      // Python: each key at its first place, with its last value.
      const last = new Map<string, string>();
      for (const [k, v] of entries) last.set(k, v.python);
      const firsts = [...new Set(entries.map(([k]) => k))];
      return {
        text: ` { ${entries.map(([k, v]) => `${JSON.stringify(k)} : ${v.text}`).join(" , ")} } `,
        python: `{${firsts.map((k) => `${JSON.stringify(k)}: ${last.get(k)}`).join(", ")}}`,
      };
    }),
  ),
})).value;

/** Python's json.dumps order, from pyEntries (strings as JSON.stringify writes the ones generated here). */
function dumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(dumps).join(", ")}]`;
  if (value !== null && typeof value === "object") return `{${pyEntries(value).map(([k, v]) => `${JSON.stringify(k)}: ${dumps(v)}`).join(", ")}}`;
  return JSON.stringify(value);
}

describe("parseJsonKeepingOrder", () => {
  it("gives every object its keys in source order, a duplicate at its first place with its last value (Python's dict)", () => {
    fc.assert(
      fc.property(written, (w) => {
        const parsed = parseJsonKeepingOrder(w.text);
        expect(parsed).toEqual(JSON.parse(w.text));
        expect(dumps(parsed)).toBe(w.python);
      }),
      { numRuns: 500 },
    );
  });
});
