/** train:model's environment for PyTorch (jemalloc preloaded, keeping the memory it frees: `trainingEnv`) and its `--scale` option. */

import { describe, expect, it } from "vitest";
import { parseScales } from "./train-data.js";
import { trainingEnv } from "./train-model.js";

describe("trainingEnv", () => {
  it("preloads jemalloc and tells it to keep freed pages", () => {
    const env = trainingEnv({ PATH: "/bin" }, "/lib/libjemalloc.so.2");
    expect(env).toEqual({ PATH: "/bin", LD_PRELOAD: "/lib/libjemalloc.so.2", MALLOC_CONF: "dirty_decay_ms:-1,muzzy_decay_ms:-1" });
  });

  it("keeps a preload or a jemalloc configuration the user set", () => {
    expect(trainingEnv({ LD_PRELOAD: "/lib/libtcmalloc.so" }, "/lib/libjemalloc.so.2")).toEqual({ LD_PRELOAD: "/lib/libtcmalloc.so" });
    expect(trainingEnv({ MALLOC_CONF: "narenas:1" }, "/lib/libjemalloc.so.2").MALLOC_CONF).toBe("narenas:1");
  });

  it("leaves the environment as it is where jemalloc is not installed", () => {
    const env = { PATH: "/bin" };
    expect(trainingEnv(env, null)).toBe(env);
  });
});

describe("--scale (train:data, train:model)", () => {
  it("reads plan names and whole multiples", () => {
    expect(parseScales("calculator=4, workspace=2")).toEqual({ calculator: 4, workspace: 2 });
    expect(parseScales(undefined)).toEqual({});
  });

  it("names what is wrong: an unknown plan, a multiple that is not a whole number ≥ 1", () => {
    expect(() => parseScales("calc=4")).toThrow(/--scale: unknown plan 'calc' \(plans: sliding_puzzle, .*calculator/);
    expect(() => parseScales("calculator=0.5")).toThrow("--scale: calculator: expected a whole multiple ≥ 1, got '0.5'");
    expect(() => parseScales("calculator")).toThrow("--scale: calculator: expected a whole multiple ≥ 1, got ''");
  });
});
