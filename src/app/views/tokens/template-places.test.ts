import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, chatPrompt, type Message } from "../../../core/index.js";
import { diffText } from "./diff.js";
import { placeHunks, trainedSummary, type PlacedMessage } from "./template-places.js";
import { compareWithTemplate, joinTokenTexts } from "./tokens.js";
import { renderChatTemplate } from "../../../core/index.js";

/**
 * A template side made of the messages' contents (not their tokens), so that a content the tokens contradict shows
 * as a difference: the placing of ranges is tested, whatever the reference.
 */
const contentRendering = (messages: readonly { role: string; content: string }[]) =>
  renderChatTemplate(messages.map((m) => ({ role: m.role === "environment" ? "tool" : m.role, content: m.content })), { addGenerationPrompt: true });

/** A message whose tokens encode `tokens` (its content may say something else: the template renders the content). */
const msg = (role: string, content: string, tokens = content, trained = false): Message => ({
  role,
  content,
  token_ids: byteLevelTokenizer.encode(tokens),
  ...(trained ? { generation_logprobs: byteLevelTokenizer.encode(tokens).map(() => -1) } : {}),
});

const placed = (messages: Message[]): PlacedMessage[] =>
  messages.map((m) => ({ tokens: m.token_ids.length, trained: m.role === "assistant" && m.generation_logprobs !== undefined }));

function places(messages: Message[]) {
  const c = compareWithTemplate(messages, byteLevelTokenizer, contentRendering(messages));
  const ids = messages.flatMap((m) => m.token_ids);
  return { c, places: placeHunks(placed(messages), ids, byteLevelTokenizer, c.template, c.decoded, c.diff.hunks)! };
}

describe("joinTokenTexts", () => {
  it("gives each token's start; a multi-byte character belongs to its last byte", () => {
    const ids = byteLevelTokenizer.encode("aé<|im_end|>b");
    const { text, starts } = joinTokenTexts(ids, byteLevelTokenizer);
    expect(text).toBe("aé<|im_end|>b");
    expect(Array.from(starts)).toEqual([0, 1, 1, 2, 12, 13]);
  });
});

describe("placeHunks: where each template difference lies, and whether trained tokens are in it", () => {
  // The log as the chat template renders it, except where a test changes something.
  const prompt = msg("user", "Move the tile.", "<|im_start|>user\nMove the tile.<|im_end|>\n<|im_start|>assistant\n");

  it("a difference inside a generated message's tokens touches trained tokens", () => {
    // The content says "left" but the tokens (what the policy generated and is trained on) say "lfet".
    const messages = [prompt, msg("assistant", "go left<|im_end|>", "go lfet<|im_end|>", true), msg("environment", "ok")];
    const { c, places: p } = places(messages);
    const inGenerated = p.filter((x) => x.trained);
    expect(inGenerated).toHaveLength(1);
    expect(inGenerated[0]).toMatchObject({ where: "inside", messages: [1] });
    const [t0, t1] = inGenerated[0]!.tokens;
    const offset = messages[0]!.token_ids.length;
    // Its tokens are the generated ones that differ ("lfet" for "left", narrowed to the characters that differ).
    expect("lfet").toContain(byteLevelTokenizer.decode(messages.flatMap((m) => m.token_ids).slice(t0, t1)));
    expect(c.diff.hunks.length).toBe(p.length);
    expect(t0).toBeGreaterThanOrEqual(offset);
    expect(t1).toBeLessThanOrEqual(offset + messages[1]!.token_ids.length);
    expect(trainedSummary(p, placed(messages))).toEqual({ touching: 1, messages: [1] });
  });

  it("a difference inside the prompt's tokens does not (it changes the context, not what is trained)", () => {
    const messages = [msg("user", "Move the tile.", "Move teh tile."), msg("assistant", "ok", "ok", true)];
    const { places: p } = places(messages);
    const inPrompt = p.filter((x) => x.where === "inside" && x.messages.includes(0));
    expect(inPrompt.length).toBeGreaterThan(0);
    for (const x of inPrompt) expect(x).toMatchObject({ messages: [0], trained: false });
    expect(trainedSummary(p, placed(messages)).touching).toBe(0);
  });

  it("the template's glue between messages touches no trained tokens", () => {
    // A raw-concatenation prompt (already templated) and an observation without its envelope: all glue.
    const messages = [msg("user", chatPrompt("2+2?", null)), msg("assistant", "4<|im_end|>", "4<|im_end|>", true), msg("environment", "right")];
    const { places: p } = places(messages);
    expect(p.length).toBeGreaterThan(0);
    expect(p.every((x) => !x.trained)).toBe(true);
    expect(p.some((x) => x.where === "between" && x.messages.join() === "1,2")).toBe(true);
  });

  it("slides an ambiguous insertion to the boundary rather than into the generated tokens", () => {
    // The template has "\n\n" where the tokens have "\n": the missing "\n" may be read as the generated message's
    // last character or as glue after it; the diff places it arbitrarily.
    const ids = [...byteLevelTokenizer.encode("hi"), ...byteLevelTokenizer.encode("ok\n"), ...byteLevelTokenizer.encode("x")];
    const messages: PlacedMessage[] = [
      { tokens: 2, trained: false },
      { tokens: 3, trained: true },
      { tokens: 1, trained: false },
    ];
    const decoded = "hiok\nx";
    const template = "hiok\n\nx";
    // Whichever of its two equivalent places the hunk is given, it is reported as glue after message 1.
    for (const at of [4, 5]) {
      const hunk = { aStart: at, aEnd: at + 1, bStart: at, bEnd: at };
      expect(template.slice(0, at) + template.slice(at + 1)).toBe(decoded);
      const [p] = placeHunks(messages, ids, byteLevelTokenizer, template, decoded, [hunk])!;
      expect(p).toMatchObject({ where: "between", messages: [1, 2], trained: false, tokens: [5, 5] });
      // The hunk as placed: the template's "\n" right after the generated message.
      expect(p!.hunk).toEqual({ aStart: 5, aEnd: 6, bStart: 5, bEnd: 5 });
    }
    // Not slidable (no equal neighbour): inside the generated message, between two of its tokens.
    const [inside] = placeHunks(messages, ids, byteLevelTokenizer, "hioXk\nx", decoded, diffText("hioXk\nx", decoded).hunks)!;
    expect(inside).toMatchObject({ where: "inside", messages: [1], trained: true });
  });

  it("maps nothing when the decoded text is not the tokens' texts joined", () => {
    const messages = [msg("user", "a"), msg("assistant", "b", "b", true)];
    const ids = messages.flatMap((m) => m.token_ids);
    expect(placeHunks(placed(messages), ids, byteLevelTokenizer, "x", "not the tokens", [{ aStart: 0, aEnd: 1, bStart: 0, bEnd: 1 }])).toBeNull();
  });
});
