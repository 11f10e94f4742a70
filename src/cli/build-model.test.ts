/** `npm run build:model`: a folder it cannot write is named, with exit status 2 and no stack trace. */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "./build-model.js";

afterEach(() => vi.restoreAllMocks());

describe("build-model", () => {
  it("names an --out or --ort-out below a file (exit 2), instead of throwing", () => {
    const dir = mkdtempSync(join(tmpdir(), "build-model-"));
    try {
      const file = join(dir, "a-file");
      writeFileSync(file, "");
      const errors: string[] = [];
      vi.spyOn(console, "error").mockImplementation((line: string) => void errors.push(line));
      vi.spyOn(console, "log").mockImplementation(() => {});
      expect(main(["--preset", "tiny", "--out", join(file, "models"), "--no-ort"])).toBe(2);
      expect(main(["--preset", "tiny", "--out", join(dir, "models"), "--ort-out", join(file, "ort")])).toBe(2);
      expect(errors).toHaveLength(2);
      for (const e of errors) expect(e).toMatch(/^error: cannot write the model files: ENOTDIR: not a directory/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
