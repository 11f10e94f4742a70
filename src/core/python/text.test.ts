import { describe, expect, it } from "vitest";
import { pyFloat, pyInt } from "./numbers.js";
import { findCodePoints, lowerCodePoints, pySplit, pyStrip, pyStripNumber, rfindCodePoints } from "./text.js";

// Python's whitespace that JavaScript's trim() does not strip, and what trim() strips that Python keeps.
const PY_ONLY = "\x1c\x1d\x1e\x1f\x85";
const JS_ONLY = "\ufeff";

describe("Python string rules", () => {
  it("strip() uses Python's whitespace set", () => {
    expect(pyStrip(" \t\n\v\f\r x y \u3000\u2028\xa0")).toBe("x y");
    expect(pyStrip(`${PY_ONLY}x${PY_ONLY}`)).toBe("x");
    expect(pyStrip(`${JS_ONLY}x${JS_ONLY}`)).toBe(`${JS_ONLY}x${JS_ONLY}`);
    expect(pyStrip("   ")).toBe("");
  });

  it("split() splits on runs of Python whitespace, with no empty parts", () => {
    expect(pySplit("  slide  1\t2 ")).toEqual(["slide", "1", "2"]);
    expect(pySplit(`a${PY_ONLY}b`)).toEqual(["a", "b"]);
    expect(pySplit(`a${JS_ONLY}b`)).toEqual([`a${JS_ONLY}b`]);
    expect(pySplit(" \n ")).toEqual([]);
  });

  it("float() and int() skip Python's whitespace less U+001C–U+001F", () => {
    expect(pyStripNumber("\x85\xa0 3\u3000")).toBe("3");
    expect(pyStripNumber("\x1c3\x1f")).toBe("\x1c3\x1f");
    expect(pyStripNumber(`${JS_ONLY}3`)).toBe(`${JS_ONLY}3`);
    expect(pyFloat("\x85 1.5\u3000")).toBe(1.5);
    expect(pyInt("\xa0-7\u2028")).toBe(-7);
    for (const bad of ["\x1c3", "3\x1f", `${JS_ONLY}3`]) {
      expect(pyFloat(bad)).toBeNull();
      expect(pyInt(bad)).toBeNull();
    }
  });

  it("lower() maps code point by code point, some to two", () => {
    expect(lowerCodePoints("AbC")).toEqual(["a", "b", "c"]);
    expect(lowerCodePoints("İ")).toHaveLength(2);
    expect(lowerCodePoints("😀A")).toEqual(["😀", "a"]);
  });

  it("find() and rfind() index code points", () => {
    const hay = Array.from("😀<a>x<a>");
    const needle = Array.from("<a>");
    expect(findCodePoints(hay, needle)).toBe(1);
    expect(findCodePoints(hay, needle, 2)).toBe(5);
    expect(findCodePoints(hay, needle, 6)).toBe(-1);
    expect(rfindCodePoints(hay, needle)).toBe(5);
    expect(rfindCodePoints(hay, Array.from("<b>"))).toBe(-1);
  });
});
