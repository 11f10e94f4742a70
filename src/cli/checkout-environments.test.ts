/** The Node commands' user environments (./checkout-environments.ts): what a folder of modules gives, and what it leaves out. */

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCheckoutEnvironments } from "./checkout-environments.js";

const root = resolve(import.meta.dirname, "../..");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "checkout-envs-"));
  const starter = await readFile(join(root, "environments/number_guess.js"), "utf8");
  const named = (name: string) => starter.replaceAll('"number_guess"', JSON.stringify(name));
  await writeFile(join(dir, "a_calc.js"), named("calculator"));
  await writeFile(join(dir, "b_twin.js"), named("twin"));
  await writeFile(join(dir, "c_twin.js"), named("twin"));
  await writeFile(join(dir, "d_solo.js"), named("solo"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("loadCheckoutEnvironments", () => {
  it("leaves out, naming each file, a module named like a built-in and every module of a name two share; the others load", async () => {
    const warnings: string[] = [];
    const loaded = await loadCheckoutEnvironments(dir, (m) => warnings.push(m));
    expect(loaded.map((d) => d.name)).toEqual(["solo"]);
    expect(warnings).toEqual([
      `warning: ${join(dir, "a_calc.js")} was not loaded: its environment is named 'calculator', a built-in environment's name (give it another)`,
      `warning: ${join(dir, "b_twin.js")} and ${join(dir, "c_twin.js")} are all named 'twin': none of them was loaded (rename all but one)`,
    ]);
  });
});
