import { describe, expect, it } from "vitest";
import type { Message } from "../../core/index.js";
import { compactLog, compactMessage, isCompact, logprobsView, packOf, TokenPack, tokenCount, tokenIdsView, withKeys } from "./compact-messages.js";

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

  it("stores log-probabilities exactly: float32 (4 bytes) while every value is one, float64 from one that is not", () => {
    const pack = new TokenPack();
    const model = compactMessage(assistant(), pack);
    expect(pack.logprobs).toBeInstanceOf(Float32Array);
    const imported = compactMessage({ role: "assistant", content: "", token_ids: [1, 2], generation_logprobs: [-0.1, -2.5] }, pack);
    expect(pack.logprobs).toBeInstanceOf(Float64Array);
    expect(imported.generation_logprobs).toEqual([-0.1, -2.5]);
    expect(JSON.stringify(imported.generation_logprobs)).toBe("[-0.1,-2.5]");
    // What was there before the pack widened is kept as it was.
    expect(model.generation_logprobs).toEqual(assistant().generation_logprobs);
    const later = compactMessage({ role: "assistant", content: "", token_ids: [3], generation_logprobs: [-1 / 3] }, pack);
    expect(later.generation_logprobs).toEqual([-1 / 3]);
    pack.trim();
    expect(pack.logprobs.length).toBe(10);
    expect(imported.generation_logprobs).toEqual([-0.1, -2.5]);
  });

  it("a model's log-probabilities stay float32 through a pack sized from the start (compactLog)", () => {
    const log = [{ role: "user", content: "hi", token_ids: [104, 105] }, assistant(), "not a message" as unknown as Message];
    const compact = compactLog(log);
    expect(compact[2]).toBe("not a message");
    const pack = packOf(compact[0]!)!;
    expect(packOf(compact[1]!)).toBe(pack);
    expect(pack.logprobs).toBeInstanceOf(Float32Array);
    expect(pack.logprobs.byteLength).toBe(4 * 7);
    expect(pack.ids.length).toBe(9);
    expect(JSON.stringify(compact.slice(0, 2))).toBe(JSON.stringify(log.slice(0, 2)));
    // A log that arrived with float64 log-probabilities (an imported file's, from the reader's Worker) stays exact.
    const wide = compactLog([{ role: "assistant", content: "", token_ids: new Int32Array([1]), generation_logprobs: new Float64Array([-0.1]) }]);
    expect(packOf(wide[0]!)!.logprobs).toBeInstanceOf(Float64Array);
    expect(wide[0]!.generation_logprobs).toEqual([-0.1]);
  });

  it("copies a message whose token ids are no token ids (out of int32, negative, not integers) as it is: nothing wraps", () => {
    for (const ids of [[3000000000], [-1], [1.5], ["7"], [null]]) {
      const m = compactMessage({ role: "user", content: "x", token_ids: ids as number[] }, new TokenPack());
      expect(isCompact(m)).toBe(false);
      expect(m.token_ids).toEqual(ids);
    }
    const max = compactMessage({ role: "user", content: "x", token_ids: [0, 2147483647] }, new TokenPack());
    expect(isCompact(max)).toBe(true);
    expect(max.token_ids).toEqual([0, 2147483647]);
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
    expect(Array.from(tokenIdsView(m))).toEqual([5, 6]);
    expect(Array.from(logprobsView(m)!)).toEqual([-1, -2]);
  });

  it("a written key holds exactly what was assigned (nothing converted), and every reader goes by it", () => {
    const m = compactMessage(assistant(), new TokenPack());
    const odd = ["a", null, 2.9] as unknown as number[];
    m.token_ids = odd;
    expect(m.token_ids).toBe(odd);
    expect(Object.keys(m)).toEqual(Object.keys(assistant()));
    expect(tokenCount(m)).toBe(3);
    expect(tokenIdsView(m)).toBe(odd);
    expect(JSON.parse(JSON.stringify(m)).token_ids).toEqual(["a", null, 2.9]);
    // withKeys keeps it; a copy into another pack cannot store it, so the copy is plain (and holds it as it is).
    const stamped = withKeys(m, { invalid_action_violations: [] });
    expect(stamped.token_ids).toBe(odd);
    expect(stamped.generation_logprobs).toEqual(assistant().generation_logprobs);
    const copy = compactMessage(stamped, new TokenPack());
    expect(isCompact(copy)).toBe(false);
    expect(copy.token_ids).toEqual(["a", null, 2.9]);
    // Valid values written are stored in the other pack when the message is copied there.
    const n = compactMessage(assistant(), new TokenPack());
    n.token_ids = [9, 8, 7];
    const other = new TokenPack();
    const moved = compactMessage(n, other);
    expect(isCompact(moved)).toBe(true);
    expect(packOf(moved)).toBe(other);
    expect(moved.token_ids).toEqual([9, 8, 7]);
    expect(Array.from(other.ids.subarray(0, other.idsUsed))).toEqual([9, 8, 7]);
  });

  it("generation_logprobs given to a compact message that had none is read, kept by withKeys and by a copy", () => {
    const m = compactMessage({ role: "assistant", content: "ok", token_ids: [1, 2] }, new TokenPack());
    expect(logprobsView(m)).toBeUndefined();
    m.generation_logprobs = [-0.1, -0.2];
    expect(Array.from(logprobsView(m)!)).toEqual([-0.1, -0.2]);
    expect(JSON.parse(JSON.stringify(m)).generation_logprobs).toEqual([-0.1, -0.2]);
    const stamped = withKeys(m, { invalid_action_violations: [] });
    expect(stamped.generation_logprobs).toEqual([-0.1, -0.2]);
    expect(Array.from(logprobsView(stamped)!)).toEqual([-0.1, -0.2]);
    const copy = compactMessage(stamped, new TokenPack());
    expect(isCompact(copy)).toBe(true);
    expect(copy.generation_logprobs).toEqual([-0.1, -0.2]);
    expect(copy.token_ids).toEqual([1, 2]);
    // Into its own pack again (the run model re-compacting what it holds): stored there, not dropped.
    const again = compactMessage(m, packOf(m)!);
    expect(again.generation_logprobs).toEqual([-0.1, -0.2]);
  });

  it("leaves a message whose numbers are not lists as it is (a copy)", () => {
    const odd = { role: "user", content: "x", token_ids: "nope" } as unknown as Message;
    const m = compactMessage(odd, new TokenPack());
    expect(isCompact(m)).toBe(false);
    expect(m).toEqual(odd);
    expect(m).not.toBe(odd);
  });
});
