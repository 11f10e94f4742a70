/** train:model's environment for PyTorch: jemalloc preloaded, keeping the memory it frees (see `trainingEnv`). */

import { describe, expect, it } from "vitest";
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
