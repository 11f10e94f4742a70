import { describe, expect, it } from "vitest";
import { formatFixed, pyFloat, pyFloatRepr, pyInt } from "./numbers.js";

describe("Python number rules", () => {
  it("float() accepts what Python accepts", () => {
    expect(pyFloat(" 1. ")).toBe(1);
    expect(pyFloat(".5")).toBe(0.5);
    expect(pyFloat("1_000.5")).toBe(1000.5);
    expect(pyFloat("-Infinity")).toBe(-Infinity);
    expect(pyFloat("nan")).toBeNaN();
    expect(pyFloat("1e3")).toBe(1000);
  });
  it("float() rejects what Python rejects", () => {
    for (const bad of ["", "1,5", "0x10", "3abc", "1__0", "_1", "e5", "."]) expect(pyFloat(bad)).toBeNull();
  });
  it("int() is decimal only", () => {
    expect(pyInt(" -12 ")).toBe(-12);
    expect(pyInt("1_0")).toBe(10);
    expect(pyInt("1.5")).toBeNull();
    expect(pyInt("")).toBeNull();
  });
  it("formats like f-strings: exact binary value, ties to even", () => {
    expect(formatFixed(0.125, 2)).toBe("0.12");
    expect(formatFixed(0.375, 2)).toBe("0.38");
    expect(formatFixed(2.675, 2)).toBe("2.67"); // 2.67499999… in binary
    expect(formatFixed(1, 5)).toBe("1.00000");
    expect(formatFixed(-0.001, 2)).toBe("-0.00");
    expect(formatFixed(1e22, 2)).toBe("10000000000000000000000.00");
    expect(formatFixed(Infinity, 2)).toBe("inf");
  });
  it("repr(float) switches to exponent form where Python does", () => {
    expect(pyFloatRepr(1.5)).toBe("1.5");
    expect(pyFloatRepr(1e16)).toBe("1e+16");
    expect(pyFloatRepr(1e-5)).toBe("1e-05");
    expect(pyFloatRepr(0.0001)).toBe("0.0001");
    expect(pyFloatRepr(3)).toBe("3.0");
  });
});
