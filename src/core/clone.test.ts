import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cloneData } from "./clone.js";

/** Plain data as environments return it: JSON values plus undefined, -0, NaN and null-prototype objects. */
const plainData = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant(-0)),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie("value"), { maxKeys: 5 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie("value"), { maxKeys: 3 }).map((d) => Object.assign(Object.create(null), d)),
  ),
})).value;

/** Every object reachable from a value. */
function objects(value: unknown, into = new Set<object>()): Set<object> {
  if (value !== null && typeof value === "object" && !into.has(value)) {
    into.add(value);
    for (const v of Object.values(value)) objects(v, into);
  }
  return into;
}

describe("cloneData", () => {
  it("gives what structuredClone gives for plain data, sharing no object with the input", () => {
    fc.assert(
      fc.property(plainData, (value) => {
        const copy = cloneData(value);
        expect(copy).toStrictEqual(structuredClone(value));
        const mine = objects(value);
        for (const o of objects(copy)) expect(mine.has(o)).toBe(false);
      }),
    );
  });

  it("keeps key order, -0 and undefined values", () => {
    const copy = cloneData({ b: 1, a: -0, c: undefined, d: [undefined, NaN] });
    expect(Object.keys(copy)).toEqual(["b", "a", "c", "d"]);
    expect(Object.is(copy.a, -0)).toBe(true);
    expect("c" in copy).toBe(true);
    expect(copy.d).toStrictEqual([undefined, NaN]);
  });

  it("hands anything but plain data to structuredClone, with the same result", () => {
    const shared = { x: 1 };
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const sparse = [1, , 3];
    const ownProto = JSON.parse('{"__proto__": {"a": 1}, "b": 2}');
    const values: unknown[] = [
      { when: new Date(5), seen: new Map([[1, "a"]]), set: new Set([2]), bytes: new Uint8Array([1, 2]) },
      { a: shared, b: shared },
      cyclic,
      sparse,
      ownProto,
      new (class Point {
        x = 1;
      })(),
    ];
    for (const value of values) expect(cloneData(value)).toStrictEqual(structuredClone(value));
    const aliased = cloneData({ a: shared, b: shared });
    expect(aliased.a).toBe(aliased.b);
    expect(aliased.a).not.toBe(shared);
    // Sharing is found among many objects too.
    const many: { i: number }[] = Array.from({ length: 40 }, (_, i) => ({ i }));
    many.push(many[3]!);
    const manyCopy = cloneData(many);
    expect(manyCopy).toStrictEqual(structuredClone(many));
    expect(manyCopy[40]).toBe(manyCopy[3]);
    const loop = cloneData(cyclic);
    expect(loop.self).toBe(loop);
    expect(Object.hasOwn(cloneData(ownProto), "__proto__")).toBe(true);
  });

  it("leaves out an array's named properties, as JSON does", () => {
    const copy = cloneData({ list: Object.assign([1, [2]], { note: "dropped" }) });
    expect(copy).toStrictEqual({ list: [1, [2]] });
    expect(Object.keys(copy.list)).toEqual(["0", "1"]);
  });

  it("fails where structuredClone fails", () => {
    expect(() => cloneData({ f: () => 1 })).toThrow(/could not be cloned/);
    expect(() => cloneData([Symbol("s")])).toThrow(/could not be cloned/);
    expect(() => cloneData(() => 1)).toThrow(/could not be cloned/);
  });
});
