import { describe, expect, it } from "vitest";
import { pyFloat, pyGet, pyInt } from "./config.js";

describe("config values as Python reads them", () => {
  it("float(): what Python accepts, and what it refuses (checked against python3)", () => {
    for (const [text, value] of [["1_0", 10], [" 2.5 ", 2.5], ["1e-3", 0.001], [".5", 0.5], ["5.", 5], ["-inf", -Infinity], ["1_0.0_1e1_0", 10.01e10]] as const) {
      expect(pyFloat(text)).toBe(value);
    }
    expect(pyFloat("nan")).toBeNaN();
    for (const bad of ["_1", "1__0", "1_", "1_e5", "1._5", "0x10", "", "abc", "1e"]) expect(() => pyFloat(bad)).toThrow("ValueError: could not convert string to float");
    expect(() => pyFloat(null)).toThrow("not 'NoneType'");
    expect(() => pyFloat([1])).toThrow("not 'list'");
    expect(pyFloat(true)).toBe(1);
  });

  it("int() and get()", () => {
    expect(pyInt(2.9)).toBe(2);
    expect(pyInt(-2.9)).toBe(-2);
    expect(pyInt(" 1_000 ")).toBe(1000);
    expect(() => pyInt("1.5")).toThrow("ValueError: invalid literal for int()");
    expect(() => pyInt(null)).toThrow("TypeError");
    expect(pyGet({ a: null }, "a", 1)).toBeNull();
    expect(pyGet({}, "a", 1)).toBe(1);
    expect(pyGet({}, "toString", 1)).toBe(1);
  });
});
