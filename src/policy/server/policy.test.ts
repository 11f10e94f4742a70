/**
 * The server policy against the stand-in server (src/cli/stand-in-server.ts) in this process, with its faults
 * injected: the concurrency limit, retries (429 with Retry-After, 500s, a dropped connection), the deadline,
 * cancellation, one row's failure among others; and against a fake server answering what a broken one would.
 * Waits are recorded, not slept: the retries' clock is the test's.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { byteLevelTokenizer, VOCAB_SIZE, type GenerationDatumSpec, type GenerationOutputSpec } from "../../core/index.js";
import { startStandInServer, type StandInOptions, type StandInServer } from "../../cli/stand-in-server.js";
import { rowSeed, ServerPolicy } from "./policy.js";
import type { ServerPolicySettings } from "./settings.js";

const standInOptions: StandInOptions = { model: "builtin:tiny" };
let server: StandInServer;
beforeAll(async () => {
  server = await startStandInServer(standInOptions);
});
afterAll(() => server.close());
afterEach(() => {
  delete standInOptions.fault;
  server.resetStats();
});

const PROMPTS = ["<|im_start|>user\nfirst<|im_end|>\n", "<|im_start|>user\nsecond one<|im_end|>\n", "<|im_start|>user\nthird<|im_end|>\n"];

function input(prompts: string[] = PROMPTS, maxNew = 6): GenerationDatumSpec {
  const rows = prompts.map((p) => byteLevelTokenizer.encode(p));
  const width = Math.max(...rows.map((r) => r.length));
  return {
    input_ids: rows.map((r) => {
      const row = new Int32Array(width).fill(byteLevelTokenizer.padTokenId);
      row.set(r);
      return row;
    }),
    input_lengths: rows.map((r) => r.length),
    stop_strings: rows.map(() => null),
    max_new_tokens: rows.map(() => maxNew),
    sample_ids: rows.map((_, i) => i),
    turns: rows.map(() => 0),
  };
}

/** A policy on the stand-in whose retry waits are recorded and return at once. */
function policy(settings: Partial<ServerPolicySettings> = {}, baseUrl = server.url) {
  const waits: number[] = [];
  const p = new ServerPolicy(
    { base_url: baseUrl, model: "builtin:tiny", max_retries: 4, ...settings },
    {
      tokenizer: byteLevelTokenizer,
      vocabSize: VOCAB_SIZE,
      retryTiming: {
        random: () => 0.5,
        sleep: async (ms) => {
          waits.push(ms);
        },
      },
    },
  );
  return { policy: p, waits };
}

const promptOf = (body: Record<string, unknown>) => byteLevelTokenizer.decode(body.prompt as number[]);
const generated = (out: GenerationOutputSpec, row: number, data: GenerationDatumSpec) =>
  Array.from(out.output_ids[row]!.subarray(data.input_lengths[row]!, out.unpadded_sequence_lengths[row]!));

describe("the server policy and the stand-in server", () => {
  it("generates every row, one request each, and says so in its metrics", async () => {
    const { policy: p } = policy();
    const data = input();
    const out = await p.generate(data, true);
    expect(out.errors).toBeUndefined();
    for (let row = 0; row < 3; row++) {
      expect(out.generation_lengths[row]).toBeGreaterThan(0);
      expect(generated(out, row, data)).toHaveLength(out.generation_lengths[row]!);
      const lps = Array.from(out.logprobs[row]!.subarray(data.input_lengths[row]!, out.unpadded_sequence_lengths[row]!));
      expect(lps.every((lp) => Number.isFinite(lp) && lp <= 0 && lp !== 0)).toBe(true);
      // Zeros over the prompt.
      expect(Array.from(out.logprobs[row]!.subarray(0, data.input_lengths[row]!)).every((lp) => lp === 0)).toBe(true);
    }
    expect(p.metrics()).toMatchObject({ "lab/server_requests": 3, "lab/server_retries": 0, "lab/server_retokenized": 0 });
    expect(server.stats.answers).toEqual([200, 200, 200]);
  });

  it("keeps max_concurrency requests in flight at the most, for all rows together", async () => {
    // The first two requests are held until both have arrived: with a limit of 2, no third may come meanwhile.
    let release!: () => void;
    const bothIn = new Promise<void>((resolve) => (release = resolve));
    standInOptions.fault = async ({ number }) => {
      if (number === 2) release();
      if (number <= 2) await bothIn;
      return null;
    };
    const { policy: p } = policy({ max_concurrency: 2 });
    const [a, b] = await Promise.all([p.generate(input(), true), p.generate(input(PROMPTS.slice(0, 2)), true)]);
    expect(a.errors).toBeUndefined();
    expect(b.errors).toBeUndefined();
    expect(server.stats.requests).toBe(5);
    expect(server.stats.maxInFlight).toBe(2);
  });

  it("retries a 429 after the server's Retry-After, then succeeds", async () => {
    let tooMany = 2;
    standInOptions.fault = () => (tooMany-- > 0 ? { status: 429, retryAfterSeconds: 3 } : null);
    const { policy: p, waits } = policy();
    const out = await p.generate(input(PROMPTS.slice(0, 1)), true);
    expect(out.errors).toBeUndefined();
    expect(out.generation_lengths[0]).toBeGreaterThan(0);
    expect(server.stats.answers).toEqual([429, 429, 200]);
    // Retry-After (3 s) is longer than the backoff (250 ms, then 500 ms, jittered): it is what was waited.
    expect(waits).toEqual([3000, 3000]);
    expect(p.metrics()).toMatchObject({ "lab/server_requests": 3, "lab/server_retries": 2 });
  });

  it("a row whose 500s use up its retries gets its own error; the other rows keep their output", async () => {
    standInOptions.fault = ({ body }) => (promptOf(body).includes("second") ? { status: 500 } : null);
    const { policy: p, waits } = policy({ max_retries: 2 });
    const data = input();
    const out = await p.generate(data, true);
    expect(out.errors![0]).toBeNull();
    expect(out.errors![2]).toBeNull();
    expect(out.errors![1]).toBe(`${server.url}/completions answered HTTP 500: injected fault: HTTP 500 (stand-in server) (tried 3 times)`);
    expect(out.generation_lengths[1]).toBe(0);
    expect(out.generation_lengths[0]).toBeGreaterThan(0);
    expect(out.generation_lengths[2]).toBeGreaterThan(0);
    // Exponential backoff: 250 ms then 500 ms, times the jitter (0.75 here).
    expect(waits).toEqual([188, 375]);
    expect(server.stats.answers.filter((a) => a === 500)).toHaveLength(3);
  });

  it("the same through generateAsync: the failed row alone has an error", async () => {
    standInOptions.fault = ({ body }) => (promptOf(body).includes("third") ? { status: 503 } : null);
    const { policy: p } = policy({ max_retries: 0 });
    const rows = new Map<number, GenerationOutputSpec>();
    for await (const [row, out] of p.generateAsync(input(), true)) rows.set(row, out);
    expect([...rows.keys()].sort()).toEqual([0, 1, 2]);
    expect(rows.get(2)!.errors![0]).toContain("answered HTTP 503");
    expect(rows.get(0)!.errors?.[0] ?? null).toBeNull();
    expect(rows.get(1)!.generation_lengths[0]).toBeGreaterThan(0);
  });

  it("generateAsync yields each row when its answer comes, not in row order", async () => {
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    standInOptions.fault = async ({ body }) => {
      if (promptOf(body).includes("first")) await firstHeld;
      return null;
    };
    const { policy: p } = policy();
    const order: number[] = [];
    for await (const [row] of p.generateAsync(input(PROMPTS.slice(0, 2)), true)) {
      order.push(row);
      releaseFirst();
    }
    expect(order).toEqual([1, 0]);
  });

  it("retries a connection dropped in the middle of an answer", async () => {
    let drop = 1;
    standInOptions.fault = () => (drop-- > 0 ? { drop: true } : null);
    const { policy: p, waits } = policy();
    const out = await p.generate(input(PROMPTS.slice(0, 1)), true);
    expect(out.errors).toBeUndefined();
    expect(server.stats.answers).toEqual(["dropped", 200]);
    expect(waits).toHaveLength(1);
  });

  it("a request past timeout_ms is aborted: the row's error names the URL; it is not retried", async () => {
    let releaseHeld!: () => void;
    const held = new Promise<void>((resolve) => (releaseHeld = resolve));
    standInOptions.fault = async () => {
      await held;
      return null;
    };
    const { policy: p } = policy({ timeout_ms: 50 });
    const out = await p.generate(input(PROMPTS.slice(0, 1)), true);
    releaseHeld();
    expect(out.errors![0]).toBe(`${server.url}/completions: no complete answer within 50 ms; the request was aborted`);
    expect(p.metrics()["lab/server_requests"]).toBe(1);
  });

  for (const path of ["generate", "generateAsync"] as const) {
    it(`${path}: cancellation through options.signal aborts the requests in flight and rejects`, async () => {
      let arrived!: () => void;
      const inFlight = new Promise<void>((resolve) => (arrived = resolve));
      let releaseHeld!: () => void;
      const held = new Promise<void>((resolve) => (releaseHeld = resolve));
      standInOptions.fault = async () => {
        arrived();
        await held;
        return null;
      };
      const { policy: p } = policy();
      const controller = new AbortController();
      const run =
        path === "generate"
          ? p.generate(input(), true, { signal: controller.signal })
          : (async () => {
              for await (const _ of p.generateAsync(input(), true, { signal: controller.signal })) void _;
            })();
      await inFlight;
      controller.abort();
      await expect(run).rejects.toMatchObject({ name: "AbortError" });
      releaseHeld();
    });
  }

  it("streams each row's tokens to onToken once its answer is in", async () => {
    const { policy: p } = policy();
    const data = input(PROMPTS.slice(0, 2));
    const seen: [number, number, string][] = [];
    const out = await p.generate(data, true, { onToken: (row, id, text) => seen.push([row, id, text]) });
    for (const row of [0, 1]) {
      expect(seen.filter(([r]) => r === row).map(([, id]) => id)).toEqual(generated(out, row, data));
    }
    expect(seen.every(([, id, text]) => text === byteLevelTokenizer.decode([id]))).toBe(true);
  });

  it("a row with no room for new tokens sends nothing", async () => {
    const { policy: p } = policy();
    const data = { ...input(PROMPTS.slice(0, 1)), max_new_tokens: [0] };
    const out = await p.generate(data, true);
    expect(out.generation_lengths).toEqual([0]);
    expect(server.stats.requests).toBe(0);
  });
});

/** A fake server: every POST is answered by `answer`; the bodies it got are kept. */
async function fakeServer(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const bodies: Record<string, unknown>[] = [];
  const headers: IncomingMessage["headers"][] = [];
  const paths: string[] = [];
  const http = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => {
      paths.push(req.url ?? "");
      headers.push(req.headers);
      if (text) bodies.push(JSON.parse(text) as Record<string, unknown>);
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`;
  return { url, bodies, headers, paths, close: () => new Promise<void>((resolve) => http.close(() => resolve())) };
}

const json = (body: unknown, status = 200) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
};

const choice = (over: Record<string, unknown> = {}, logprobs: Record<string, unknown> = {}) => ({
  choices: [{ index: 0, text: "ab", finish_reason: "length", logprobs: { tokens: ["token_id:97", "token_id:98"], token_logprobs: [-0.5, -1], ...logprobs }, ...over }],
});

describe("what the server policy sends, and answers it refuses", () => {
  it("sends vLLM's fields: token-id prompt, max_tokens, stop strings kept, a seed per sample and turn, logprobs and token ids", async () => {
    const fake = await fakeServer(json(choice()));
    try {
      const { policy: p } = policy({ seed: 7, temperature: 0.8, top_k: 0, top_p: 0.9 }, `${fake.url}/`);
      const data = { ...input(PROMPTS.slice(0, 1), 2), stop_strings: [["</s>", ""]], sample_ids: [5], turns: [2] };
      await p.generate(data, false);
      expect(fake.paths).toEqual(["/v1/completions"]);
      expect(fake.bodies[0]).toEqual({
        model: "builtin:tiny",
        prompt: byteLevelTokenizer.encode(PROMPTS[0]!),
        max_tokens: 2,
        temperature: 0.8,
        top_p: 0.9,
        top_k: -1,
        seed: rowSeed(7, 5, 2),
        n: 1,
        stream: false,
        stop: ["</s>"],
        include_stop_str_in_output: true,
        skip_special_tokens: false,
        logprobs: 1,
        return_tokens_as_token_ids: true,
        return_token_ids: true,
      });
      expect(fake.headers[0]!["content-type"]).toBe("application/json");
      expect(fake.headers[0]!.authorization).toBeUndefined();
      // Greedy: temperature 0, the sampling settings left out.
      await p.generate(data, true);
      expect(fake.bodies[1]).toMatchObject({ temperature: 0 });
      expect(fake.bodies[1]).not.toHaveProperty("top_p");
    } finally {
      await fake.close();
    }
  });

  it("sends the API key as Authorization: Bearer", async () => {
    const fake = await fakeServer(json(choice()));
    try {
      const p = new ServerPolicy({ base_url: fake.url, model: "m" }, { tokenizer: byteLevelTokenizer, apiKey: "k-123" });
      await p.generate(input(PROMPTS.slice(0, 1), 2), true);
      expect(fake.headers[0]!.authorization).toBe("Bearer k-123");
    } finally {
      await fake.close();
    }
  });

  const refused: [string, (req: IncomingMessage, res: ServerResponse) => void, string][] = [
    ["text that is not JSON", json("<html>oops</html>"), "answered with text that is not JSON"],
    ["no choices", json({ id: "x" }), "the answer's choices: expected a list of one choice, got undefined"],
    ["a token id out of the vocabulary", json(choice({}, { tokens: ["token_id:97", "token_id:999"] })), "the answer's choices[0].logprobs.tokens[1]: expected a token id of the tokenizer's vocabulary (an integer from 0 to 264), got 999"],
    ["a NaN log-probability (as a string)", json(choice({}, { token_logprobs: [-0.5, "NaN"] })), "the answer's choices[0].logprobs.token_logprobs[1]: expected a finite log-probability, got \"NaN\""],
    ["a null log-probability", json(choice({}, { token_logprobs: [null, -1] })), "the answer's choices[0].logprobs.token_logprobs[0]: expected a finite log-probability, got null"],
    ["an unknown finish_reason", json(choice({ finish_reason: "abort" })), "the answer's choices[0].finish_reason: expected \"stop\" or \"length\", got \"abort\""],
    ["more tokens than max_tokens", json(choice({ token_ids: [97, 98, 99] }, { tokens: ["a", "b", "c"], token_logprobs: [-1, -1, -1] })), "choices[0].token_ids: expected at most max_tokens = 2 tokens, got 3"],
    ["token ids that disagree", json(choice({ token_ids: [97, 99] })), "choices[0].logprobs.tokens: expected the same token ids as choices[0].token_ids"],
  ];
  for (const [what, answer, message] of refused) {
    it(`refuses ${what}, naming the field and the row; not retried`, async () => {
      const fake = await fakeServer(answer);
      try {
        const { policy: p } = policy({}, fake.url);
        const out = await p.generate({ ...input(PROMPTS.slice(0, 1), 2), sample_ids: [4], turns: [1] }, true);
        expect(out.errors![0]).toContain(message);
        expect(out.errors![0]).toContain(`${fake.url}/completions`);
        if (what !== "text that is not JSON") expect(out.errors![0]).toContain("row 0 (sample 4, turn 1)");
        expect(fake.bodies).toHaveLength(1);
      } finally {
        await fake.close();
      }
    });
  }

  it("does not follow a redirect, nor retry it", async () => {
    const fake = await fakeServer((_req, res) => {
      res.writeHead(307, { location: "http://elsewhere.example/v1/completions" });
      res.end();
    });
    try {
      const { policy: p } = policy({}, fake.url);
      const out = await p.generate(input(PROMPTS.slice(0, 1), 2), true);
      expect(out.errors![0]).toContain(`${fake.url}/completions answered with a redirect (HTTP 307 to http://elsewhere.example/v1/completions)`);
      expect(fake.bodies).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it("a 400 is not retried: its message is the row's error", async () => {
    const fake = await fakeServer(json({ object: "error", message: "This model's maximum context length is 32 tokens", code: 400 }, 400));
    try {
      const { policy: p } = policy({}, fake.url);
      const out = await p.generate(input(PROMPTS.slice(0, 1), 2), true);
      expect(out.errors![0]).toBe(`${fake.url}/completions answered HTTP 400: This model's maximum context length is 32 tokens`);
      expect(fake.bodies).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it("a server that cannot be reached: retried, then the row's error names the URL", async () => {
    const fake = await fakeServer(json(choice()));
    await fake.close();
    const { policy: p, waits } = policy({ max_retries: 1 }, fake.url);
    const out = await p.generate(input(PROMPTS.slice(0, 1), 2), true);
    expect(out.errors![0]).toMatch(new RegExp(`^${fake.url.replace(/[.]/g, "\\.")}/completions: cannot reach the server: fetch failed.*\\(tried 2 times\\)$`));
    expect(waits).toHaveLength(1);
  });
});
