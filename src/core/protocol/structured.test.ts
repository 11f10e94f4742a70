import { describe, expect, it } from "vitest";
import { ByteLevelTokenizer } from "../tokenizer/byte-level.js";
import { renderChatTemplate } from "./chat-template.js";
import type { TokenizerInterface } from "../types.js";
import {
  observationText,
  resolveStructuredToolUse,
  structuredDecodeSkipSpecial,
  structuredThinkingStyle,
  templateToolResponseEnvelope,
  TOOL_RESPONSE_ENVELOPE_PREFIX,
  TOOL_RESPONSE_ENVELOPE_SUFFIX,
  toolTagsSurviveSkipSpecial,
  wrapToolResponseEnvelope,
} from "./structured.js";

const CHATML = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"];
const stripsTags = () => new ByteLevelTokenizer({ specialMarkers: [...CHATML, "<tool_call>", "</tool_call>"] });

/** Counts encode calls, to observe the probe's memoization. */
function counting(inner: TokenizerInterface, throws = false): TokenizerInterface & { calls: number } {
  const t = {
    calls: 0,
    padTokenId: inner.padTokenId,
    eosTokenId: inner.eosTokenId,
    encode(text: string) {
      t.calls++;
      if (throws) throw new Error("boom");
      return inner.encode(text);
    },
    decode: (ids: readonly number[], o?: { skipSpecialTokens?: boolean }) => inner.decode(ids, o),
  };
  return t;
}

describe("resolveStructuredToolUse (fork-additions.md §1.3)", () => {
  it("is null for absent, empty or disabled blocks, which are never validated", () => {
    expect(resolveStructuredToolUse(null)).toBeNull();
    expect(resolveStructuredToolUse(undefined)).toBeNull();
    expect(resolveStructuredToolUse({})).toBeNull();
    expect(resolveStructuredToolUse({ enabled: false, thinking_style: "bogus", backend: "sglang" })).toBeNull();
    expect(resolveStructuredToolUse({ enabled: 0 })).toBeNull();
    expect(resolveStructuredToolUse({ enabled: [] })).toBeNull();
    expect(resolveStructuredToolUse({ thinking_style: "closing_only" })).toBeNull();
  });

  it("returns the same object, nothing filled in, for a truthy enabled", () => {
    const block = { enabled: true };
    expect(resolveStructuredToolUse(block)).toBe(block);
    expect(block).toEqual({ enabled: true });
    const yes = { enabled: "yes", backend: "vllm", thinking_style: "closing_only" };
    expect(resolveStructuredToolUse(yes)).toBe(yes);
  });

  it("checks the style (explicit null included) before the backend", () => {
    expect(() => resolveStructuredToolUse({ enabled: true, thinking_style: "bogus", backend: "sglang" })).toThrow(
      "structured_tool_use.thinking_style must be one of ('paired', 'closing_only'), got 'bogus'",
    );
    expect(() => resolveStructuredToolUse({ enabled: true, thinking_style: null })).toThrow(
      "structured_tool_use.thinking_style must be one of ('paired', 'closing_only'), got None",
    );
    expect(() => resolveStructuredToolUse({ enabled: true, backend: "sglang" })).toThrow(
      "structured_tool_use v1 supports only the 'vllm' backend, got 'sglang'",
    );
  });
});

describe("structuredThinkingStyle and structuredDecodeSkipSpecial (§1.5)", () => {
  it("defaults the thinking style to paired", () => {
    expect(structuredThinkingStyle(null)).toBe("paired");
    expect(structuredThinkingStyle({ enabled: true })).toBe("paired");
    expect(structuredThinkingStyle({ enabled: true, thinking_style: "closing_only" })).toBe("closing_only");
  });

  it("skips special tokens on the legacy path whatever the tokenizer", () => {
    expect(structuredDecodeSkipSpecial(null, stripsTags())).toBe(true);
  });

  it("lets an explicit value win, and probes the tokenizer when it is null or absent", () => {
    expect(structuredDecodeSkipSpecial({ enabled: true, decode_skip_special_tokens: false }, new ByteLevelTokenizer())).toBe(false);
    expect(structuredDecodeSkipSpecial({ enabled: true, decode_skip_special_tokens: true }, stripsTags())).toBe(true);
    expect(structuredDecodeSkipSpecial({ enabled: true }, new ByteLevelTokenizer())).toBe(true);
    expect(structuredDecodeSkipSpecial({ enabled: true, decode_skip_special_tokens: null }, stripsTags())).toBe(false);
  });

  it("probes once per tokenizer, and a throwing tokenizer means false (cached too)", () => {
    const ok = counting(new ByteLevelTokenizer());
    expect(toolTagsSurviveSkipSpecial(ok)).toBe(true);
    const after = ok.calls;
    expect(after).toBe(2);
    expect(toolTagsSurviveSkipSpecial(ok)).toBe(true);
    expect(ok.calls).toBe(after);

    const bad = counting(new ByteLevelTokenizer(), true);
    expect(structuredDecodeSkipSpecial({ enabled: true }, bad)).toBe(false);
    expect(structuredDecodeSkipSpecial({ enabled: true }, bad)).toBe(false);
    expect(bad.calls).toBe(1);

    // The probe stops at the first tag that does not survive.
    const strips = counting(stripsTags());
    expect(toolTagsSurviveSkipSpecial(strips)).toBe(false);
    expect(strips.calls).toBe(1);
  });
});

describe("the observation envelope (§1.6, decision 8)", () => {
  it("has the fork's literal constants (33 + 50 characters)", () => {
    expect(TOOL_RESPONSE_ENVELOPE_PREFIX).toBe("<|im_start|>user\n<tool_response>\n");
    expect(TOOL_RESPONSE_ENVELOPE_SUFFIX).toBe("\n</tool_response><|im_end|>\n<|im_start|>assistant\n");
    expect(TOOL_RESPONSE_ENVELOPE_PREFIX).toHaveLength(33);
    expect(TOOL_RESPONSE_ENVELOPE_SUFFIX).toHaveLength(50);
  });

  it("wraps content as PREFIX + content + SUFFIX", () => {
    expect(wrapToolResponseEnvelope("RESULT")).toBe(
      "<|im_start|>user\n<tool_response>\nRESULT\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
    );
    expect(wrapToolResponseEnvelope("")).toHaveLength(83);
  });

  it("in template mode adds the turn separator and closes a turn cut at a stop string", () => {
    const tail = "\n<|im_start|>user\n<tool_response>\nout\n</tool_response><|im_end|>\n<|im_start|>assistant\n";
    expect(templateToolResponseEnvelope("out", { assistantText: "<tool_call>x</tool_call><|im_end|>" })).toBe(tail);
    expect(templateToolResponseEnvelope("out", { assistantText: "<tool_call>x</tool_call>" })).toBe(`<|im_end|>${tail}`);
    expect(
      templateToolResponseEnvelope("out", { assistantText: "a<|im_end|>", generationPrefill: "<think>\n" }),
    ).toBe(`${tail}<think>\n`);
  });

  it("with a tokenizer's real template: the text that template renders after the turn (here the built-in ChatML, so the same)", () => {
    const base = new ByteLevelTokenizer();
    const withTemplate = (prefill: string) =>
      Object.assign(Object.create(base) as ByteLevelTokenizer, {
        applyChatTemplate: (messages: { role: string; content: string }[], o: { addGenerationPrompt: boolean }) =>
          renderChatTemplate(messages, { addGenerationPrompt: o.addGenerationPrompt }) + (o.addGenerationPrompt ? prefill : ""),
      });
    const tail = "\n<|im_start|>user\n<tool_response>\nout\n</tool_response><|im_end|>\n<|im_start|>assistant\n";
    const tokenizer = withTemplate("");
    expect(templateToolResponseEnvelope("out", { assistantText: "<tool_call>x</tool_call><|im_end|>", tokenizer })).toBe(tail);
    expect(templateToolResponseEnvelope("out", { assistantText: "<tool_call>x</tool_call>", tokenizer })).toBe(`<|im_end|>${tail}`);
    // The template's own generation prompt, prefill included, ends the envelope (the context's prefill is not added).
    expect(templateToolResponseEnvelope("out", { assistantText: "a<|im_end|>", tokenizer: withTemplate("<think>\n"), generationPrefill: "x" })).toBe(
      `${tail}<think>\n`,
    );
    // A template that rewrites the turn: cut at its last end-of-turn token before the observation.
    const rewrites = Object.assign(Object.create(base) as ByteLevelTokenizer, {
      applyChatTemplate: (messages: { role: string; content: string }[], o: { addGenerationPrompt: boolean }) =>
        renderChatTemplate(messages.map((m) => (m.role === "assistant" ? { ...m, content: `[${m.content}]` } : m)), { addGenerationPrompt: o.addGenerationPrompt }),
    });
    expect(templateToolResponseEnvelope("out", { assistantText: "a<|im_end|>", tokenizer: rewrites })).toBe(tail);
    expect(templateToolResponseEnvelope("out", { assistantText: "a", tokenizer: rewrites })).toBe(`<|im_end|>${tail}`);
  });

  it("observationText: raw when structured is off, the fork's envelope by default, the template's on request", () => {
    const ctx = { assistantText: "x<|im_end|>" };
    expect(observationText("out", null, ctx)).toBe("out");
    expect(observationText("out", { enabled: true }, ctx)).toBe(wrapToolResponseEnvelope("out"));
    expect(observationText("out", { enabled: true, envelope: "fork" }, ctx)).toBe(wrapToolResponseEnvelope("out"));
    expect(observationText("out", { enabled: true, envelope: "template" }, ctx)).toBe(
      templateToolResponseEnvelope("out", ctx),
    );
  });
});
