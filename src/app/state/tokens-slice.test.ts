import { describe, expect, it } from "vitest";
import { create } from "zustand";
import { createTokensSlice, type TokensSlice } from "./tokens-slice.js";

function slice() {
  const asked: [number[], string][] = [];
  const store = create<{ tokens: TokensSlice }>()((set, get) => ({
    tokens: createTokensSlice(
      (patch) => set((s) => ({ tokens: { ...s.tokens, ...(typeof patch === "function" ? patch(s.tokens) : patch) } })),
      () => get().tokens,
      (ids, vocabulary) => asked.push([ids, vocabulary]),
    ),
  }));
  return { tokens: () => store.getState().tokens, asked };
}

describe("token texts are one vocabulary's", () => {
  it("asks only for ids not known in that vocabulary", () => {
    const { tokens, asked } = slice();
    tokens().request([1, 2, 2], "builtin:tiny-qwen3");
    tokens().add("builtin:tiny-qwen3", [1, 2], ["a", "b"], [false, true]);
    tokens().request([2, 3], "builtin:tiny-qwen3");
    expect(asked).toEqual([
      [[1, 2], "builtin:tiny-qwen3"],
      [[3], "builtin:tiny-qwen3"],
    ]);
    expect(tokens().texts.get(2)).toEqual({ text: "b", special: true });
  });

  it("another vocabulary starts afresh, and a late answer in the old one is dropped", () => {
    const { tokens, asked } = slice();
    tokens().request([5], "org/model-a");
    tokens().request([5], "org/model-b");
    tokens().add("org/model-a", [5], ["from a"], [false]);
    expect(tokens().texts.size).toBe(0);
    tokens().add("org/model-b", [5], ["from b"], [false]);
    expect(tokens().texts.get(5)?.text).toBe("from b");
    expect(asked.map(([, v]) => v)).toEqual(["org/model-a", "org/model-b"]);
  });
});
