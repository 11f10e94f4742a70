import { describe, expect, it } from "vitest";
import { readHash, shareHash } from "./share-url.js";

describe("share links", () => {
  it("round-trips a scenario with non-ASCII text and the autorun flag", () => {
    const scenario = { mode: "sync", note: "héllo 🤖 <tool_call>" };
    expect(readHash(shareHash(scenario, true))).toEqual({ scenario, autorun: true });
    expect(readHash(shareHash(scenario, false))).toEqual({ scenario, autorun: false });
  });
  it("reports a broken link and ignores other hashes", () => {
    expect(readHash("#scenario=%%%")).toMatchObject({ error: expect.stringContaining("cannot be read") });
    expect(readHash("#other=1")).toBeNull();
  });
});
