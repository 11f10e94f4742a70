import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ADDED_TOKENS, ByteLevelTokenizer, EOS_TOKEN_ID, PAD_TOKEN_ID, VOCAB_SIZE } from "./byte-level.js";

const MARKERS = [
  "<|endoftext|>",
  "<|im_start|>",
  "<|im_end|>",
  "<tool_call>",
  "</tool_call>",
  "<think>",
  "</think>",
  "<tool_response>",
  "</tool_response>",
];

describe("ByteLevelTokenizer (scenario-format.md)", () => {
  const tok = new ByteLevelTokenizer();

  it("encodes each UTF-8 byte as one token", () => {
    expect(tok.encode("hi")).toEqual([104, 105]);
    expect(tok.encode("é")).toEqual([0xc3, 0xa9]);
    expect(tok.encode("😀")).toEqual([0xf0, 0x9f, 0x98, 0x80]);
    expect(tok.encode("")).toEqual([]);
    expect(tok.encode("exit_code=0\nhello")).toHaveLength(17);
  });

  it("round-trips text with accents, emoji, CJK and control characters", () => {
    for (const text of ["", "héllo wörld", "naïve café 😀👍🏽", "日本語テキスト", "a\u0000b\r\n\t", "Z͑ͫ̓ͪ̂ͫ̽͏̴̙̤̞͉͚̯̞̠͍"]) {
      expect(tok.decode(tok.encode(text))).toBe(text);
    }
  });

  it("makes each of the nine markers one token with ids 256–264", () => {
    const ids = MARKERS.map((m) => tok.encode(m));
    for (const one of ids) expect(one).toHaveLength(1);
    expect(ids.flat().sort((a, b) => a - b)).toEqual([256, 257, 258, 259, 260, 261, 262, 263, 264]);
    expect(ADDED_TOKENS.map((t) => t.content).sort()).toEqual([...MARKERS].sort());
    expect(PAD_TOKEN_ID).toBe(tok.encode("<|endoftext|>")[0]);
    expect(EOS_TOKEN_ID).toBe(tok.encode("<|im_end|>")[0]);
    expect(VOCAB_SIZE).toBe(265);
  });

  it("finds markers inside text and round-trips a whole ChatML exchange", () => {
    const text =
      '<|im_start|>assistant\n<think>plan</think>\n<tool_call>\n{"name": "x", "arguments": {}}\n</tool_call><|im_end|>' +
      "<|im_start|>user\n<tool_response>\nout\n</tool_response><|im_end|>\n";
    const ids = tok.encode(text);
    expect(ids.filter((id) => id >= 256)).toHaveLength(10);
    expect(ids.slice(0, 1)).toEqual(tok.encode("<|im_start|>"));
    expect(tok.decode(ids)).toBe(text);
    // A partial marker is plain bytes.
    expect(tok.encode("<tool_call")).toHaveLength(10);
  });

  it("encodes as its definition does: leftmost markers (longest first), everything else as UTF-8 bytes", () => {
    const pattern = new RegExp([...MARKERS].sort((a, b) => b.length - a.length).map((m) => m.replace(/[|]/g, "\\|")).join("|"), "g");
    const utf8 = (t: string) => [...new TextEncoder().encode(t)];
    const byDefinition = (text: string) => {
      const ids: number[] = [];
      let last = 0;
      for (const m of text.matchAll(pattern)) {
        ids.push(...utf8(text.slice(last, m.index)), ADDED_TOKENS.find((t) => t.content === m[0])!.id);
        last = m.index + m[0].length;
      }
      return [...ids, ...utf8(text.slice(last))];
    };
    // Texts made of marker pieces, "<", ASCII, accents, emoji and lone surrogates.
    const piece = fc.oneof(
      fc.constantFrom(...MARKERS, "<", "<|", "</", "<tool", "|>", ">"),
      fc.string({ maxLength: 4 }),
      fc.constantFrom("é", "😀", "日本", "\uD800", "\uDC00x", "\u0085"),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join("");
        expect(tok.encode(text)).toEqual(byDefinition(text));
      }),
      { numRuns: 500 },
    );
  });

  it("encodes a text longer than the ids it keeps room for, and short ones after it", () => {
    const long = "ab<think>é".repeat(20_000);
    const ids = tok.encode(long);
    expect(ids).toHaveLength(20_000 * (2 + 1 + 2));
    expect(tok.decode(ids)).toBe(long);
    expect(tok.encode("hi<|im_end|>")).toEqual([104, 105, 258]);
  });

  it("drops only the three ChatML tokens when skipping special tokens", () => {
    const text = "<|im_start|>a<tool_call>b</tool_call><think>c</think><tool_response>d</tool_response><|endoftext|><|im_end|>";
    expect(tok.decode(tok.encode(text), { skipSpecialTokens: true })).toBe(
      "a<tool_call>b</tool_call><think>c</think><tool_response>d</tool_response>",
    );
    expect(tok.decode(tok.encode(text), { skipSpecialTokens: false })).toBe(text);
    const special = MARKERS.filter((m) => tok.isSpecial(tok.encode(m)[0]!));
    expect(special).toEqual(["<|endoftext|>", "<|im_start|>", "<|im_end|>"]);
  });

  it("can flag other markers special (a tokenizer that strips the tool-call tags)", () => {
    const strips = new ByteLevelTokenizer({ specialMarkers: ["<|im_end|>", "<tool_call>", "</tool_call>"] });
    expect(strips.decode(strips.encode("<tool_call>x</tool_call><|im_end|>"), { skipSpecialTokens: true })).toBe("x");
    expect(strips.decode(strips.encode("<|im_start|>x"), { skipSpecialTokens: true })).toBe("<|im_start|>x");
    // The shared flags of other instances are untouched.
    expect(tok.isSpecial(tok.encode("<tool_call>")[0]!)).toBe(false);
  });

  it("decodes a UTF-8 character cut apart to U+FFFD", () => {
    const e = tok.encode("é");
    expect(tok.decode([e[0]!])).toBe("\uFFFD");
    expect(tok.decode([e[0]!, tok.encode("<|im_end|>")[0]!, e[1]!])).toBe("\uFFFD<|im_end|>\uFFFD");
    // A skipped special token is gone before the bytes are read, as Hugging Face's byte-level decoder drops it: the
    // character it cut apart is whole again. A kept marker (special or not) still cuts it.
    for (const marker of ["<|im_end|>", "<|im_start|>", "<|endoftext|>"]) {
      expect(tok.decode([e[0]!, tok.encode(marker)[0]!, e[1]!], { skipSpecialTokens: true })).toBe("é");
    }
    expect(tok.decode([e[0]!, tok.encode("<think>")[0]!, e[1]!], { skipSpecialTokens: true })).toBe("\uFFFD<think>\uFFFD");
    const emoji = tok.encode("😀");
    expect(tok.decode(emoji.slice(0, 3))).toBe("\uFFFD");
    expect(tok.decode([...emoji.slice(0, 2), 104])).toBe("\uFFFDh");
    expect(tok.decode([0xff])).toBe("\uFFFD");
  });

  it("rejects ids outside the vocabulary", () => {
    expect(() => tok.decode([265])).toThrow(RangeError);
    expect(() => tok.decode([-1])).toThrow(RangeError);
  });

  it("shows one token's text for token views", () => {
    expect(tok.tokenText(104)).toBe("h");
    expect(tok.tokenText(0xc3)).toBe("<0xC3>");
    expect(tok.tokenText(259)).toBe("<tool_call>");
  });
});
