import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { writeJsonInSlices } from "./export-slices.js";

const write = async (value: unknown) => {
  const out: string[] = [];
  let ticks = 0;
  await writeJsonInSlices(value, out, async () => void (ticks += 1));
  return { text: out.join(""), ticks };
};

describe("writeJsonInSlices", () => {
  it("writes what JSON.stringify writes, for any JSON value (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        expect((await write(value)).text).toBe(JSON.stringify(value));
      }),
    );
  });

  it("leaves out and nulls what JSON.stringify does, and defers to toJSON", async () => {
    const value = { a: undefined, b: () => 1, c: [undefined, () => 1, Symbol("s"), NaN], d: new Date(0), e: { toJSON: () => "x" }, "k\"ey": 1 };
    expect((await write(value)).text).toBe(JSON.stringify(value));
  });

  it("can yield after every element of a big value (a long script's scenario)", async () => {
    const scenario = { policy: { kind: "scripted", responses: Array.from({ length: 50 }, (_, i) => Array.from({ length: 20 }, (_, t) => `r${i}.${t}`)) } };
    const { text, ticks } = await write(scenario);
    expect(text).toBe(JSON.stringify(scenario));
    expect(ticks).toBeGreaterThan(1000);
  });
});
