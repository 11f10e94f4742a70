/**
 * Server-renders the pinned token's detail and the template comparison's verdict (no DOM needed): model output is
 * text, never markup; a model token's alternatives are listed; missing ones are said plainly.
 */

import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, type Message } from "../../../core/index.js";
import { packTokenDetails } from "../../run/compact-messages.js";
import { RunModel, type SampleView } from "../../run/run-model.js";
import { TemplateComparisonBody } from "../TokenView.js";
import { TokenDetail } from "./TokenDetail.js";
import { NO_ALTERNATIVES_KEPT } from "./token-detail.js";
import { compareWithTemplate, messageSpans, type TokenTexts } from "./tokens.js";
import { renderChatTemplate } from "../../../core/index.js";

/**
 * A template side made of the messages' contents (not their tokens), so that a content the tokens contradict shows
 * as a difference: the placing of ranges is tested, whatever the reference.
 */
const contentRendering = (messages: readonly { role: string; content: string }[]) =>
  renderChatTemplate(messages.map((m) => ({ role: m.role === "environment" ? "tool" : m.role, content: m.content })), { addGenerationPrompt: true });

const HOSTILE = "<img src=x onerror=alert(1)>";

/** A tokenizer whose token 7 is markup, and the byte-level texts otherwise. */
const texts: TokenTexts = {
  tokenText: (id) => (id === 7 ? HOSTILE : byteLevelTokenizer.tokenText(id)),
  isSpecial: (id) => byteLevelTokenizer.isSpecial(id),
};

function sample(): SampleView {
  const model = new RunModel();
  const prompt: Message = { role: "user", content: "hi", token_ids: [104, 105] };
  model.apply({ type: "rollout_start", t: 0, mode: "sync", samples: [{ sample: 0, idx: 0, task_name: "t", message_log: [prompt], extra_env_info: null }], maxRolloutTurns: 1, maxSeqLen: 100 });
  model.apply({ type: "turn_start", t: 1, sample: 0, turn: 0, inputTokens: 2 });
  const assistant: Message = { role: "assistant", content: "x", token_ids: [7, 111], generation_logprobs: [-0.5, -3] };
  model.apply({ type: "assistant_message", t: 2, sample: 0, turn: 0, message: assistant, truncated: false });
  return model.samples[0]!;
}

const render = (s: SampleView, index: number, sampled: boolean, spanAt = 1) =>
  renderToStaticMarkup(
    createElement(TokenDetail, { sample: s, span: messageSpans(s)[spanAt]!, index, pos: messageSpans(s)[spanAt]!.offset + index, tokenizer: texts, sampled, onClose: () => {} }),
  );

describe("TokenDetail (server-rendered)", () => {
  it("shows a token's markup as text, with its escapes, id and trained mark", () => {
    const html = render(sample(), 0, false);
    expect(html).not.toMatch(/<img/);
    expect(html).toContain("&lt;img·src=x·onerror=alert(1)&gt;");
    expect(html).toContain("&quot;&lt;img src=x onerror=alert(1)&gt;&quot;");
    expect(html).toContain('data-testid="token-detail-id">7<');
    expect(html).toContain("#2");
    expect(html).toMatch(/data-testid="token-detail-trained"[^>]*>yes \(/);
    expect(html).toContain("no alternatives recorded: a text policy");
  });

  it("a model's token: log-probability, probability, entropy and the alternatives, the chosen one marked", () => {
    const s = sample();
    s.turns[0]!.tokenDetails = packTokenDetails(
      [
        { entropy: 1.25, top: [{ tokenId: 7, logprob: -0.5, text: HOSTILE }, { tokenId: 8, logprob: -1.5, text: "\n" }] },
        { entropy: 0.5, top: [{ tokenId: 9, logprob: -0.1, text: "a" }, { tokenId: 10, logprob: -2.5, text: "b" }] },
      ],
      new Map(),
    )!;
    const html = render(s, 0, true);
    expect(html).not.toMatch(/<img/);
    expect(html).toContain('data-testid="token-detail-logprob">-0.5000<');
    expect(html).toContain('data-testid="token-detail-probability">0.607<');
    expect(html).toContain("1.2500 nats");
    expect(html.match(/data-testid="token-alternative"/g)).toHaveLength(2);
    expect(html).toContain('data-chosen="true"');
    expect(html).toContain(">↵<");
    // The second token was drawn from outside its step's top alternatives.
    expect(render(s, 1, true)).toContain('data-testid="token-chosen-outside"');
  });

  it("a model's token without recorded details says why; a prompt token is not generated nor trained", () => {
    const s = sample();
    expect(render(s, 0, true)).toContain(NO_ALTERNATIVES_KEPT.replace("'", "&#x27;"));
    const prompt = render(s, 0, true, 0);
    expect(prompt).toMatch(/data-testid="token-detail-trained"[^>]*>no \(a prompt token/);
    expect(prompt).toContain("not generated");
  });
});

describe("TemplateComparisonBody's verdict", () => {
  const messages: Message[] = [
    { role: "user", content: "hi", token_ids: byteLevelTokenizer.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n") },
    { role: "assistant", content: "go left", token_ids: byteLevelTokenizer.encode("go lfet"), generation_logprobs: [0, 0, 0, 0, 0, 0, 0] },
  ];
  it("says how many ranges touch trained tokens, and which message", async () => {
    const { placeHunks } = await import("./template-places.js");
    const c = compareWithTemplate(messages, byteLevelTokenizer, contentRendering(messages));
    const placed = messages.map((m) => ({ tokens: m.token_ids.length, trained: m.role === "assistant" }));
    const places = placeHunks(placed, messages.flatMap((m) => m.token_ids), byteLevelTokenizer, c.template, c.decoded, c.diff.hunks);
    const html = renderToStaticMarkup(createElement(TemplateComparisonBody, { ...c, places, labels: ["prompt (user)", "turn 0 assistant"], trained: [false, true] }));
    expect(html).toMatch(/1 of \d+ differing ranges? touches trained tokens \(turn 0 assistant\)/);
    expect(html).toContain('data-trained="true"');
    const untouched = renderToStaticMarkup(createElement(TemplateComparisonBody, { ...c, places: places!.map((p) => ({ ...p, trained: false })), labels: [], trained: [] }));
    expect(untouched).toMatch(/\d+ differing ranges?; none touch trained tokens/);
  });
});
