/**
 * Server-renders the transcript and the token view (no DOM needed) from a run model fed real events: a smoke test
 * that hostile model and environment text comes out escaped, and that long logs stay collapsed.
 */

import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, chatPrompt, type Message } from "../../../core/index.js";
import { RunModel } from "../../run/run-model.js";
import { TokenView } from "../TokenView.js";
import { Transcript } from "../Transcript.js";

const HOSTILE = "<img src=x onerror=alert(1)>";

const message = (role: string, content: string, logprobs = false): Message => {
  const token_ids = byteLevelTokenizer.encode(content);
  return { role, content, token_ids, ...(logprobs ? { generation_logprobs: token_ids.map((_, i) => -i / 10) } : {}) };
};

function runModel(promptText: string): RunModel {
  const model = new RunModel();
  const prompt = message("user", promptText);
  model.apply({
    type: "rollout_start",
    t: 0,
    mode: "sync",
    samples: [{ sample: 0, idx: 0, task_name: "t", message_log: [prompt], extra_env_info: null }],
    maxRolloutTurns: 3,
    maxSeqLen: 100000,
  });
  model.apply({ type: "turn_start", t: 1, sample: 0, turn: 0, inputTokens: prompt.token_ids.length });
  const text = `<think>${HOSTILE}</think><script>alert(1)</script>\n<tool_call>{"name": "run_shell", "arguments": {"command": "${"<b>"}"}}</tool_call><|im_end|>`;
  model.apply({ type: "assistant_message", t: 2, sample: 0, turn: 0, message: message("assistant", text, true), truncated: false });
  model.apply({
    type: "env_step",
    t: 3,
    sample: 0,
    turn: 0,
    observation: message("environment", `${HOSTILE}<script>x</script>`),
    reward: 0.5,
    rewardComponents: null,
    terminated: false,
    truncatedContext: false,
    violations: [{ type: "env_invalid_action", severity: 1, locus: "reward", detail: HOSTILE }],
    metadata: null,
  });
  model.apply({ type: "turn_start", t: 4, sample: 0, turn: 1, inputTokens: 10 });
  model.apply({ type: "token", t: 5, sample: 0, turn: 1, tokenId: 60, text: "<" });
  model.apply({ type: "token", t: 5, sample: 0, turn: 1, tokenId: 105, text: "img onerror=x" });
  return model;
}

const structured = { enabled: true, envelope: "fork" as const, thinkingStyle: "paired" as const };

describe("Transcript (server-rendered)", () => {
  it("escapes hostile text everywhere and shows turns, calls, violations and the stream", () => {
    const model = runModel(chatPrompt("hi", null));
    const html = renderToStaticMarkup(
      createElement(Transcript, { sample: model.samples[0]!, selectedTurn: 0, onSelectTurn: () => {}, structured }),
    );
    expect(html).not.toMatch(/<img|<script|<b>/);
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain('data-testid="turn" data-turn="0"');
    expect(html).toContain('data-turn="1"');
    expect(html).toContain('data-turn="0" class="tx-turn selected"');
    expect(html).toContain('data-turn="1" class="tx-turn"');
    expect(html).toContain('data-verdict="parsed"');
    expect(html).toContain("schema ok");
    expect(html).toContain("env_invalid_action · severity 1 · reward");
    expect(html).toContain("streaming…");
    expect(html).toContain("reward +0.5");
    expect(html).toContain("total 0.5");
  });

  it("says how the sample ended, with its error", () => {
    const model = runModel("hello");
    model.apply({ type: "sample_end", t: 9, sample: 0, idx: 0, termination: "error", error: `boom ${HOSTILE}`, totalReward: 0.5, turns: 2 });
    const html = renderToStaticMarkup(
      createElement(Transcript, { sample: model.samples[0]!, selectedTurn: null, onSelectTurn: () => {}, structured: null }),
    );
    expect(html).toContain("Ended: <strong>error</strong>");
    expect(html).toContain("boom &lt;img");
    expect(html).toContain("no response");
  });

  it("collapses a long prompt to its first lines", () => {
    const long = Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n");
    const html = renderToStaticMarkup(
      createElement(Transcript, { sample: runModel(long).samples[0]!, selectedTurn: null, onSelectTurn: () => {}, structured: null }),
    );
    expect(html).toContain("line 5");
    expect(html).not.toContain("line 6\n");
    expect(html).toContain("show all (44 more lines)");
  });
});

describe("TokenView (server-rendered)", () => {
  it("draws chips with escaped text, logprob colours and special marks", () => {
    const model = runModel("hi");
    const html = renderToStaticMarkup(createElement(TokenView, { sample: model.samples[0]!, tokenizer: byteLevelTokenizer, sampled: true }));
    expect(html).not.toMatch(/<img|<script/);
    expect(html).toContain('class="tk-chip generated" style="background:hsl(120 70% 82%)"');
    expect(html).toContain('class="tk-chip generated special"');
    expect(html).toContain('data-kind="prompt"');
    expect(html).toContain('data-kind="environment"');
    expect(html).toContain("2 tokens streamed");
  });

  it("a text policy's tokens carry no log-probabilities: no colours, no mean, and the legend says why", () => {
    const model = runModel("hi");
    const html = renderToStaticMarkup(createElement(TokenView, { sample: model.samples[0]!, tokenizer: byteLevelTokenizer, sampled: false }));
    expect(html).not.toContain("background:hsl(");
    expect(html).not.toContain("mean logprob");
    expect(html).toContain('data-testid="no-logprobs"');
    expect(html).toMatch(/none: this policy writes its responses, it does not sample them/);
  });

  it("keeps a long message collapsed", () => {
    const model = runModel("x".repeat(5000));
    const html = renderToStaticMarkup(createElement(TokenView, { sample: model.samples[0]!, tokenizer: byteLevelTokenizer, sampled: true }));
    expect(html).toContain("show 5000 tokens");
    expect(html.split('class="tk-chip prompt"').length - 1).toBeLessThan(10);
  });
});
