// builtin:trained's tokenizer is its built folder's: the committed weights carry byte-pair merges of their own, so the
// core's byte-level tokenizer would read its ids as bytes (a scenario's `tokenizer` key, the token view, forks).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { byteLevelTokenizer } from "../../core/index.js";
import { BYTE_LEVEL_SPECS } from "../builtin-model/presets.js";
import { parseWeightsFile } from "../builtin-model/weights-file.js";
import { TRAINED_WEIGHTS_FILE } from "../builtin-model/write-folder.js";
import { loadPolicyTokenizer, tokenizerFolder } from "./tokenizer-load.js";

describe("builtin:trained's tokenizer", () => {
  it("is its folder's, with the committed weights' merges: fewer tokens than bytes, the same text back", async () => {
    const merges = parseWeightsFile(new Uint8Array(readFileSync(TRAINED_WEIGHTS_FILE))).merges;
    expect(merges.length).toBeGreaterThan(0);
    expect(BYTE_LEVEL_SPECS).not.toContain("builtin:trained");
    expect(tokenizerFolder("builtin:trained")).toMatch(/builtin[\\/]trained$/);
    const tokenizer = await loadPolicyTokenizer("builtin:trained");
    const text = '{"name": "task_complete", "arguments": {}}';
    const ids = tokenizer.encode(text);
    expect(ids.length).toBeLessThan(byteLevelTokenizer.encode(text).length);
    expect(Math.max(...ids)).toBeGreaterThanOrEqual(265); // a merged token
    expect(Math.max(...ids)).toBeLessThan(265 + merges.length);
    expect(tokenizer.decode(ids)).toBe(text);
  }, 60_000);
});
