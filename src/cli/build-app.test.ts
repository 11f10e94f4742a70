/**
 * When the browser backends of `rollout-lab regress` rebuild `dist/`: where it is missing, and where a source it is
 * built from (the app's code, a model folder under public/ rewritten for new weights) changed after it was built;
 * not for a test file.
 */

import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { builtAppState, newestSourceChange } from "./build-app.js";

const root = mkdtempSync(join(tmpdir(), "build-app-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const at = (path: string, seconds: number) => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, "x");
  utimesSync(path, seconds, seconds);
};

describe("builtAppState", () => {
  it("is missing without dist/index.html, current when dist is newer than every source, stale after a source changes", () => {
    at(join(root, "src", "app", "App.tsx"), 1_000);
    at(join(root, "public", "models", "builtin", "trained", "onnx", "model.onnx"), 1_000);
    at(join(root, "index.html"), 1_000);
    expect(builtAppState(root)).toBe("missing");
    at(join(root, "dist", "index.html"), 2_000);
    expect(builtAppState(root)).toBeNull();
    // New weights installed: their model folder under public/ is rewritten after the build.
    at(join(root, "public", "models", "builtin", "trained", "onnx", "model.onnx"), 3_000);
    expect(builtAppState(root)).toBe("stale");
    at(join(root, "dist", "index.html"), 4_000);
    expect(builtAppState(root)).toBeNull();
    at(join(root, "src", "app", "App.tsx"), 5_000);
    expect(builtAppState(root)).toBe("stale");
  });

  it("leaves test files and what is outside the app's sources out", () => {
    const other = mkdtempSync(join(tmpdir(), "build-app-other-"));
    try {
      at(join(other, "src", "core", "run.ts"), 1_000);
      at(join(other, "src", "core", "run.test.ts"), 9_000);
      at(join(other, "docs", "notes.md"), 9_000);
      expect(newestSourceChange(other)).toBe(1_000_000);
      at(join(other, "dist", "index.html"), 2_000);
      expect(builtAppState(other)).toBeNull();
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
