import { describe, expect, it } from "vitest";
import type { Message } from "../../core/index.js";
import { compactMessage, isCompact, logprobsView, TokenPack, tokenCount, tokenIdsView, withKeys } from "./compact-messages.js";

const f32 = (x: number) => Math.fround(x);

const assistant = (): Message => ({
  role: "assistant",
  content: "<action>left</action>",
  token_ids: [60, 97, 99, 116, 257, 1000000, 0],
  generation_logprobs: [f32(-0.125), f32(-3.3), 0, f32(-1e-7), f32(-17.25), f32(-0.5), 0],
  invalid_action_violations: [{ type: "invalid_format", severity: 1, locus: "response", detail: null }],
});

describe("compact messages", () => {
  it("read back as the same message: JSON, spread, structuredClone and array methods see plain arrays", () => {
    const pack = new TokenPack();
    const original = assistant();
    const m = compactMessage(original, pack);
    expect(isCompact(m)).toBe(true);
    expect(Array.isArray(m.token_ids)).toBe(true);
    expect(m.token_ids).toEqual(original.token_ids);
    expect(m.generation_logprobs).toEqual(original.generation_logprobs);
    expect(JSON.stringify(m)).toBe(JSON.stringify(original));
    expect(Object.keys(m)).toEqual(Object.keys(original));
    expect({ ...m }).toEqual(original);
    expect(structuredClone(m)).toEqual(original);
    expect([m].flatMap((x) => x.token_ids)).toEqual(original.token_ids);
    expect(m.token_ids.map((id) => id + 1)).toEqual(original.token_ids.map((id) => id + 1));
    expect(tokenCount(m)).toBe(7);
    expect(Array.from(tokenIdsView(m))).toEqual(original.token_ids);
    expect(Array.from(logprobsView(m)!)).toEqual(original.generation_logprobs);
  });

  it("keeps a sample's messages end to end in one pack, and a message without logprobs without the key", () => {
    const pack = new TokenPack();
    const prompt = compactMessage({ role: "user", content: "hi", token_ids: [104, 105] }, pack);
    const answer = compactMessage(assistant(), pack);
    const observation = compactMessage({ role: "environment", content: "ok", token_ids: [] }, pack);
    expect("generation_logprobs" in prompt).toBe(false);
    expect(JSON.stringify(prompt)).toBe('{"role":"user","content":"hi","token_ids":[104,105]}');
    expect(observation.token_ids).toEqual([]);
    expect(pack.idsUsed).toBe(9);
    expect(pack.logprobsUsed).toBe(7);
    pack.trim();
    expect(pack.ids.length).toBe(9);
    expect(answer.token_ids).toEqual(assistant().token_ids);
    expect(prompt.token_ids).toEqual([104, 105]);
  });

  it("stores log-probabilities as float32 (a float64 value is rounded to the nearest float32)", () => {
    const m = compactMessage({ role: "assistant", content: "", token_ids: [1], generation_logprobs: [-0.1] }, new TokenPack());
    expect(m.generation_logprobs).toEqual([f32(-0.1)]);
  });

  it("withKeys changes other keys and shares the numbers; copying into another pack copies them", () => {
    const pack = new TokenPack();
    const m = compactMessage({ ...assistant(), invalid_action_violations: undefined }, pack);
    const stamped = withKeys(m, { invalid_action_violations: [] });
    expect(stamped.invalid_action_violations).toEqual([]);
    expect(stamped.token_ids).toEqual(m.token_ids);
    expect(pack.idsUsed).toBe(7);
    const other = new TokenPack();
    const copy = compactMessage(stamped, other);
    expect(copy).toEqual(stamped);
    expect(other.idsUsed).toBe(7);
  });

  it("writing token_ids or generation_logprobs stores the new values", () => {
    const m = compactMessage(assistant(), new TokenPack());
    m.token_ids = [5, 6];
    m.generation_logprobs = [-1, -2];
    expect(m.token_ids).toEqual([5, 6]);
    expect(m.generation_logprobs).toEqual([-1, -2]);
    expect(tokenCount(m)).toBe(2);
  });

  it("leaves a message whose numbers are not lists as it is (a copy)", () => {
    const odd = { role: "user", content: "x", token_ids: "nope" } as unknown as Message;
    const m = compactMessage(odd, new TokenPack());
    expect(isCompact(m)).toBe(false);
    expect(m).toEqual(odd);
    expect(m).not.toBe(odd);
  });
});
