import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildGenerationInput, byteLevelTokenizer, ContextRows, type Message, type TokenizerInterface } from "../core/index.js";
import { TextPolicy, type TextRequest } from "./text-policy.js";

const tok = byteLevelTokenizer;
const msg = (role: string, content: string): Message => ({ role, content, token_ids: tok.encode(content) });

/** A tokenizer that counts the ids it decodes. */
function countingDecodes(): { tokenizer: TokenizerInterface; decoded: () => number } {
  let n = 0;
  const tokenizer: TokenizerInterface = {
    padTokenId: tok.padTokenId,
    eosTokenId: tok.eosTokenId,
    encode: (text) => tok.encode(text),
    decode: (ids, options) => {
      n += ids.length;
      return tok.decode(ids, options);
    },
  };
  return { tokenizer, decoded: () => n };
}

describe("TextPolicy", () => {
  it("gives each turn the whole context's text, decoding only what is new since the sample's last turn", async () => {
    const { tokenizer, decoded } = countingDecodes();
    const seen: string[] = [];
    const policy = new TextPolicy(tokenizer, (r) => {
      seen.push(r.promptText);
      return "ok</a>";
    });
    // Two samples in a batch, turn after turn; one context has multi-byte characters and markers in it.
    const logs: Message[][] = [
      [msg("user", "<|im_start|>user\nplay é 😀<|im_end|>\n")],
      [msg("user", "<|im_start|>user\nplain<|im_end|>\n")],
    ];
    let previous = 0;
    let previousLengths = [0, 0];
    for (let turn = 0; turn < 4; turn++) {
      const input = buildGenerationInput(logs, [["</a>"], ["</a>"]], { padTokenId: tok.padTokenId, maxSeqLen: 4096, maxNewTokens: 16, sampleIds: [0, 1], turns: [turn, turn] });
      seen.length = 0;
      const out = await policy.generate(input, false);
      expect(seen).toEqual(logs.map((log) => tok.decode(log.flatMap((m) => m.token_ids))));
      // The tokens added since the sample's last turn, not the whole contexts.
      const added = input.input_lengths.reduce((n, length, i) => n + length - previousLengths[i]!, 0);
      expect(decoded() - previous).toBe(added);
      previous = decoded();
      previousLengths = input.input_lengths;
      logs.forEach((log, i) => {
        log.push({ role: "assistant", content: "ok</a>", token_ids: Array.from(out.output_ids[i]!.subarray(input.input_lengths[i], out.unpadded_sequence_lengths[i])) });
        log.push(msg("environment", i === 0 ? `<environment>\nß ${turn} ✓</environment>\n` : `<environment>\n${turn}</environment>\n`));
      });
    }
  });

  it("decodes the whole prompt again when it is not the cached one extended", async () => {
    const seen: string[] = [];
    const policy = new TextPolicy(tok, (r) => {
      seen.push(r.promptText);
      return "x";
    });
    const run = (texts: string[]) =>
      policy.generate(buildGenerationInput(texts.map((t) => [msg("user", t)]), texts.map(() => null), { padTokenId: tok.padTokenId, maxSeqLen: 4096, maxNewTokens: 4, sampleIds: texts.map((_, i) => i), turns: texts.map(() => 0) }), false);
    await run(["abc", "é"]);
    await run(["abd", "éa"]); // changed inside / the cached prompt ended inside a character's bytes
    await run(["ab", "é"]); // shorter
    expect(seen).toEqual(["abc", "é", "abd", "éa", "ab", "é"]);
  });

  it("gives the same prompts and output rows with the rollouts' context ids as without (property)", async () => {
    const piece = fc.constantFrom("a", "é", "😀", "<|im_end|>", "\n", "<think>", "xyz");
    const turnAdds = fc.array(fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => p.join("")), { minLength: 2, maxLength: 2 });
    await fc.assert(
      fc.asyncProperty(fc.array(turnAdds, { minLength: 1, maxLength: 6 }), fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }), async (turns, restarts) => {
        const seen: Record<"hinted" | "plain", string[]> = { hinted: [], plain: [] };
        const policy = (into: string[]) =>
          new TextPolicy(tok, (r) => {
            into.push(r.promptText);
            return r.turn % 2 ? "é!</a>" : "ok";
          });
        const hinted = policy(seen.hinted);
        const plain = policy(seen.plain);
        const contexts = new ContextRows(tok.padTokenId);
        let logs: Message[][] = [[], []];
        for (const [t, added] of turns.entries()) {
          // Logs grow by new arrays of the same messages; sometimes one starts over (its context gets a new id).
          logs = logs.map((log, i) => (restarts[t] && i === 1 ? [msg("user", added[i]!)] : [...log, msg("user", added[i]!)]));
          const options = { padTokenId: tok.padTokenId, maxSeqLen: 4096, maxNewTokens: 8, sampleIds: [0, 1], turns: [t, t] };
          const withIds = buildGenerationInput(logs, [["</a>"], null], { ...options, contexts });
          expect(withIds.context_ids).toHaveLength(2);
          const a = await hinted.generate(withIds, false);
          const b = await plain.generate(buildGenerationInput(logs, [["</a>"], null], options), false);
          expect(a.output_ids.map((r) => Array.from(r))).toEqual(b.output_ids.map((r) => Array.from(r)));
          expect(a.unpadded_sequence_lengths).toEqual(b.unpadded_sequence_lengths);
          logs = logs.map((log, i) => [...log, { role: "assistant", content: "", token_ids: Array.from(a.output_ids[i]!.subarray(withIds.input_lengths[i], a.unpadded_sequence_lengths[i])) }]);
        }
        expect(seen.hinted).toEqual(seen.plain);
      }),
      { numRuns: 60 },
    );
  });

  it("takes a context id as a promise: the part of a prompt it has seen under that id is not read again", async () => {
    const seen: string[] = [];
    const policy = new TextPolicy(tok, (r) => {
      seen.push(r.promptText);
      return "!";
    });
    const row = (text: string, contextId: number) => {
      const ids = Int32Array.from(tok.encode(text));
      return { input_ids: [ids], input_lengths: [ids.length], stop_strings: [null], max_new_tokens: [4], sample_ids: [0], turns: [0], context_ids: [contextId] };
    };
    await policy.generate(row("abc", 7), false);
    // The same id claims "abX…" extends "abc": the policy keeps what it has (a caller must not break the promise) …
    const kept = await policy.generate(row("abXd", 7), false);
    expect(seen[1]).toBe("abcd");
    expect(tok.decode(Array.from(kept.output_ids[0]!.subarray(0, 4)))).toBe("abcd");
    // … and another id is read from the start.
    const fresh = await policy.generate(row("abXd", 8), false);
    expect(seen[2]).toBe("abXd");
    expect(tok.decode(Array.from(fresh.output_ids[0]!.subarray(0, 4)))).toBe("abXd");
  });

  it("makes promptText and promptIds only for a responder that reads them", async () => {
    const { tokenizer, decoded } = countingDecodes();
    const requests: TextRequest[] = [];
    const policy = new TextPolicy(tokenizer, (r) => {
      requests.push(r);
      return "y";
    });
    const input = buildGenerationInput([[msg("user", "hello there")], [msg("user", "hi")]], [null, null], { padTokenId: tok.padTokenId, maxSeqLen: 4096, maxNewTokens: 4 });
    await policy.generate(input, false);
    expect(decoded()).toBe(0);
    expect(requests.map((r) => r.promptIds)).toEqual([tok.encode("hello there"), tok.encode("hi")]);
    expect(requests.map((r) => r.promptText)).toEqual(["hello there", "hi"]);
  });

  it("returns the prompt and the response right-padded, with zero log-probabilities", async () => {
    const policy = new TextPolicy(tok, ({ sampleId }) => (sampleId === 0 ? "long answer" : "ok"));
    const input = buildGenerationInput([[msg("user", "abc")], [msg("user", "a")]], [null, null], { padTokenId: tok.padTokenId, maxSeqLen: 4096, maxNewTokens: 32 });
    const out = await policy.generate(input, false);
    const eos = tok.eosTokenId;
    const pad = tok.padTokenId;
    expect(out.output_ids.map((row) => Array.from(row))).toEqual([
      [...tok.encode("abc"), ...tok.encode("long answer"), eos],
      [...tok.encode("a"), ...tok.encode("ok"), eos, ...new Array(11).fill(pad)],
    ]);
    expect(out.logprobs.map((row) => Array.from(row))).toEqual([new Array(15).fill(0), new Array(15).fill(0)]);
    expect(out.unpadded_sequence_lengths).toEqual([15, 4]);
    expect(out.generation_lengths).toEqual([12, 3]);
  });
});
