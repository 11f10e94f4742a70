import { describe, expect, it } from "vitest";
import { runScenario } from "../scenario/run.js";
import { fixtureLogprobs, fixtureResponse, fixtureScenario, rawSize } from "./page-fixture.js";

describe("the page and memory benchmarks' run", () => {
  it("runs every sample for exactly the turns asked, never solving its board", async () => {
    const result = await runScenario(fixtureScenario({ samples: 3, turns: 4, seed: 1 }));
    expect(result.samples.map((s) => s.termination)).toEqual(["max_turns", "max_turns", "max_turns"]);
    for (const s of result.samples) expect(s.message_log.filter((m) => m.role === "assistant")).toHaveLength(4);
    const answer = result.samples[0]!.message_log[1]!.content;
    expect(answer).toMatch(/^<think>\n[^]*\n<\/think>\n<action>(left|right)<\/action>$/);
    expect(answer).toBe(fixtureResponse(1, 0, 0));
  });

  it("draws seeded float32 log-probabilities in (−8, 0]", () => {
    const a = fixtureLogprobs(1, 2, 3, 500);
    expect(fixtureLogprobs(1, 2, 3, 500)).toEqual(a);
    expect(fixtureLogprobs(1, 2, 4, 500)).not.toEqual(a);
    for (const x of a) {
      expect(x).toBe(Math.fround(x));
      expect(x).toBeLessThanOrEqual(0);
      expect(x).toBeGreaterThan(-8);
    }
  });

  it("counts the raw size: 4 bytes a token id, 4 a log-probability, the text as UTF-8", () => {
    const size = rawSize([
      { content: "hé", token_ids: [1, 2, 3], generation_logprobs: [0, -1] },
      { content: "ok", token_ids: new Int32Array(2) },
    ]);
    expect(size).toEqual({ tokenIds: 20, logprobs: 8, textBytes: 5, total: 33 });
  });
});
