import { describe, expect, it } from "vitest";
import { MAX_LINK_DEPTH, MAX_SHARE_LINK_LENGTH, nestingBeyond, readHash, shareHash } from "./share-url.js";

const b64 = (text: string) => Buffer.from(text).toString("base64url");

describe("share links", () => {
  it("round-trips a scenario with non-ASCII text and the autorun flag", () => {
    const scenario = { mode: "sync", note: "héllo 🤖 <tool_call>" };
    expect(readHash(shareHash(scenario, true))).toEqual({ scenario, autorun: true });
    expect(readHash(shareHash(scenario, false))).toEqual({ scenario, autorun: false });
  });

  it("reports a broken link and ignores other hashes", () => {
    expect(readHash("#scenario=%%%")).toMatchObject({ error: "the link's scenario cannot be read: it is not base64url text" });
    expect(readHash("#scenario=")).toMatchObject({ error: "the link's scenario cannot be read: it is empty" });
    expect(readHash(`#scenario=${b64("{not json")}&run=1`)).toMatchObject({ error: expect.stringMatching(/^the link's scenario cannot be read: it is not JSON \(/), autorun: true });
    expect(readHash(`#scenario=${Buffer.from([0xff, 0xfe, 0x7b]).toString("base64url")}`)).toMatchObject({ error: "the link's scenario cannot be read: it is not UTF-8 text" });
    expect(readHash("#other=1")).toBeNull();
    expect(readHash("")).toBeNull();
  });

  it("a value nested 5,000 deep (a 13 KB link) is an error naming the depth and where, not a stack overflow", () => {
    const text = `{"mode":"sync","envs":{"t":{"env":"sliding_puzzle","config":{"x":${"[".repeat(5000)}0${"]".repeat(5000)}}}}}`;
    const hash = `#scenario=${b64(text)}&run=1`;
    expect(hash.length).toBeGreaterThan(13_000);
    const read = readHash(hash);
    expect(read).toEqual({
      error: "the link's scenario cannot be read: it nests arrays and objects 5,004 levels deep (at envs.t.config.x[0][0][0][0][0][0][0][0]…), more than the 100 a scenario may have",
      autorun: true,
    });
    // A million levels too: one pass, no recursion.
    expect(readHash(`#scenario=${b64(`${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`)}`)).toMatchObject({ error: expect.stringContaining("1,000,000 levels deep (at [0][0][0]") });
  });

  it("nestingBeyond: counts containers only (not brackets in strings), names keys with escapes and indices", () => {
    expect(nestingBeyond('{"a": "[[[[[[", "b": [1, 2]}', 2)).toBeNull();
    expect(nestingBeyond('{"a": "[[[[[[", "b": [1, {"c\\"d": [[0]]}]}', 3)).toEqual({ depth: 5, path: 'b[1].c"d' });
    expect(nestingBeyond("[[0], [[1]]]", 2)).toEqual({ depth: 3, path: "[1][0]" });
    expect(nestingBeyond(`{"ok": ${"[".repeat(MAX_LINK_DEPTH - 1)}${"]".repeat(MAX_LINK_DEPTH - 1)}}`, MAX_LINK_DEPTH)).toBeNull();
  });

  it("the longest link shared is 64 KiB", () => {
    expect(MAX_SHARE_LINK_LENGTH).toBe(65_536);
  });
});
