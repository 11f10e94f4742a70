import { describe, expect, it } from "vitest";
import { locateSyntaxError } from "./syntax-error.js";

describe("locateSyntaxError", () => {
  it("names the module's line and column of a syntax error, with the line and a caret", () => {
    const source = 'export default {\n  name: "broken",\n  create() { return { step( } }; },\n};\n';
    expect(locateSyntaxError(source, "broken_env.js")).toBe('broken_env.js:3:29: Unexpected token\n  create() { return { step( } }; },\n                            ^');
  });

  it("gives null for a module that parses (the engine's own message stands)", () => {
    expect(locateSyntaxError("export default { name: 'fine' };\n", "fine.js")).toBeNull();
  });
});
