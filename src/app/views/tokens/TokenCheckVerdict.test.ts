// The token check's verdict as the token view draws it: the divergence's index, message and reason, both sides'
// tokens as text (escaped: tokens are data), and what a run whose model is not loaded needs.
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { CheckResult } from "../../../scenario/token-check.js";
import { TokenCheckVerdict } from "./TokenCheckVerdict.js";

const sample = { messages: [{ role: "user", content: "", token_ids: [] }, { role: "assistant", content: "", token_ids: [] }, { role: "environment", content: "", token_ids: [] }] };
const drift: CheckResult = {
  consistent: false,
  first_divergence: { token_index: 41, message_index: 2, ours: ["<b>x</b>", "\n"], template: ["\n", "<|im_start|>"], reason: "observation_envelope" },
  before: ["<|im_end|>"],
  reference: { text: "", ids: [1, 2, 3] },
  ours: [1, 2],
};

const draw = (props: Parameters<typeof TokenCheckVerdict>[0]) => renderToStaticMarkup(createElement(TokenCheckVerdict, props));

describe("TokenCheckVerdict", () => {
  it("a drift: token index, message and role, the reason in words, both sides' tokens escaped and the first marked", () => {
    const html = draw({ check: { state: "done", result: drift, tokenizer: "byte-level (ChatML)" }, sample, onReveal: () => {} });
    expect(html).toContain('data-state="drift"');
    expect(html).toContain("token #41");
    expect(html).toContain("(message 2, environment)");
    expect(html).toContain("observation_envelope, an observation outside the template&#x27;s envelope");
    expect(html).toContain("&lt;b&gt;x&lt;/b&gt;");
    expect(html).not.toContain("<b>x</b>");
    expect(html.match(/tk-diverge/g)).toHaveLength(2);
    expect(html).toContain('data-testid="token-check-reveal"');
  });

  it("consistent, and a model not loaded (with the load button only where the page can load one)", () => {
    const ok = { ...drift, consistent: true, first_divergence: null, before: [] };
    expect(draw({ check: { state: "done", result: ok, tokenizer: "builtin:tiny-qwen3" }, sample, onReveal: null })).toContain("Consistent with the chat template");
    const needs = { state: "needs_model" as const, model: "org/model", loaded: "builtin:tiny-qwen3" };
    const without = draw({ check: needs, sample, onReveal: null });
    expect(without).toContain("needs the tokenizer of <code>org/model</code>");
    expect(without).toContain("it has builtin:tiny-qwen3 loaded now");
    expect(without).not.toContain("token-check-load");
    expect(draw({ check: needs, sample, onReveal: null, onLoadTokenizer: () => Promise.resolve() })).toContain('data-testid="token-check-load"');
  });
});
