/** A link's scenario that names environment modules the page has not loaded (./link.ts). */

import { describe, expect, it } from "vitest";
import { missingEnvironments } from "./link.js";

describe("missingEnvironments", () => {
  it("names the environments a scenario runs on that are neither built in, remote (http) nor a loaded module", () => {
    const scenario = { envs: { a: { env: "sliding_puzzle" }, b: { env: "echo_env" }, c: { env: "http" }, d: { env: "number_guess" } } } as never;
    const ready = [{ origin: "n.js", source: "file", status: "ready", description: { name: "number_guess" }, error: null, generation: 1 }] as never;
    expect(missingEnvironments(scenario, ready)).toEqual(["echo_env"]);
    expect(missingEnvironments(scenario, [])).toEqual(["echo_env", "number_guess"]);
  });
});
