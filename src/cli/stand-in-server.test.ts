/** The stand-in inference server: its subset of vLLM's API, its CORS headers, its command line. */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { byteLevelTokenizer } from "../core/index.js";
import { countedFaults, parseStandInArgs, startStandInServer, type StandInServer } from "./stand-in-server.js";

let server: StandInServer;
beforeAll(async () => {
  server = await startStandInServer({ model: "builtin:tiny", servedName: "tiny" });
});
afterAll(() => server.close());

const post = (body: unknown) => fetch(`${server.url}/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("the stand-in server", () => {
  it("lists its model at GET /v1/models", async () => {
    const answer = await fetch(`${server.url}/models`);
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
    expect(await answer.json()).toEqual({ object: "list", data: [{ id: "tiny", object: "model", created: 0, owned_by: "rollout-lab stand-in" }] });
  });

  it("answers the CORS preflight of a JSON POST with Authorization", async () => {
    const answer = await fetch(`${server.url}/completions`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:4173", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
    });
    expect(answer.status).toBe(204);
    expect(answer.headers.get("access-control-allow-methods")).toBe("GET, POST, OPTIONS");
    expect(answer.headers.get("access-control-allow-headers")).toBe("authorization, content-type");
  });

  it("completes a token-id prompt in vLLM's answer shape", async () => {
    const prompt = byteLevelTokenizer.encode("<|im_start|>user\nhello<|im_end|>\n");
    const answer = await post({ model: "tiny", prompt, max_tokens: 5, temperature: 0, logprobs: 1, return_tokens_as_token_ids: true, return_token_ids: true });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { choices: { text: string; finish_reason: string; token_ids: number[]; logprobs: { tokens: string[]; token_logprobs: number[] } }[]; usage: Record<string, number> };
    const [choice] = body.choices;
    expect(choice!.logprobs.tokens).toEqual(choice!.token_ids.map((id) => `token_id:${id}`));
    expect(choice!.logprobs.token_logprobs).toHaveLength(choice!.token_ids.length);
    expect(["stop", "length"]).toContain(choice!.finish_reason);
    expect(body.usage).toEqual({ prompt_tokens: prompt.length, completion_tokens: choice!.token_ids.length, total_tokens: prompt.length + choice!.token_ids.length });
    // A string prompt is tokenized with the model's tokenizer, as vLLM's is.
    expect((await post({ model: "tiny", prompt: "hello", max_tokens: 2 })).status).toBe(200);
  });

  it("answers vLLM's errors for another model name or a bad request", async () => {
    const other = await post({ model: "gpt-9", prompt: [1, 2], max_tokens: 2 });
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ object: "error", message: "The model `gpt-9` does not exist." });
    const bad = await post({ model: "tiny", prompt: [], max_tokens: 2 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toBe("prompt: expected a string or a non-empty list of token ids");
  });

  it("counted faults come in turn: 429s, then 500s, then a dropped answer", () => {
    const fault = countedFaults({ tooManyRequests: 1, retryAfterSeconds: 2, serverErrors: 1, dropped: 1 });
    const request = { number: 1, body: {} };
    expect([fault(request), fault(request), fault(request), fault(request)]).toEqual([{ status: 429, retryAfterSeconds: 2 }, { status: 500 }, { drop: true }, null]);
  });

  it("its command line", () => {
    expect(parseStandInArgs(["--port", "9001", "--model", "builtin:tiny", "--delay-ms", "5"])).toEqual({ port: 9001, model: "builtin:tiny", delayMs: 5 });
    expect(parseStandInArgs(["--fail-429", "2"]).fault).toBeTypeOf("function");
    expect(parseStandInArgs(["--api-key-env", "KEY"], { KEY: "k" }).apiKey).toBe("k");
    expect(() => parseStandInArgs(["--api-key-env", "KEY"], {})).toThrow("--api-key-env: the environment variable KEY is not set");
    expect(() => parseStandInArgs(["--port", "x"])).toThrow("--port: expected an integer ≥ 0, got 'x'");
    expect(() => parseStandInArgs(["--bogus"])).toThrow("unknown option --bogus");
  });
});
