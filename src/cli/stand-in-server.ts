/**
 * A **stand-in** inference server: the lab's built-in model (`builtin:small` by default) behind the subset of the
 * OpenAI-compatible API that the server policy uses, in vLLM's field names and answer shape: `GET /v1/models` and
 * `POST /v1/completions` (./stand-in-completion.ts). It is no inference server (no streaming, no prefix cache across
 * requests: each turn is prefilled whole; requests in flight at once share the model's running batch); it is there to try the server policy without one, from Node or from the page (it sends the
 * CORS headers), and for tests, which inject faults: a delay per request, 429 answers with `Retry-After`, 500
 * answers, connections dropped in the middle of an answer.
 *
 * `npm run serve:stand-in -- [--port 8000] [--model builtin:small] [--served-name NAME] [--delay-ms N]
 * [--fail-429 N] [--retry-after S] [--fail-500 N] [--drop N] [--api-key-env VAR]`
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ModelPolicy } from "../policy/llm/model-policy.js";
import { loadNodeModel } from "../policy/llm/node.js";
import { isEntryPoint } from "./entry.js";
import { complete, CompletionRequestError, readCompletionRequest, type CompletionRequest } from "./stand-in-completion.js";
import { UsageError } from "./node-run.js";

/** A fault to answer one completion request with, instead of (or before) its answer. */
export interface StandInFault {
  /** Wait this long first. */
  delayMs?: number;
  /** Answer this status instead (429: with `Retry-After`). */
  status?: 429 | 500 | 503;
  retryAfterSeconds?: number;
  /** Send the answer's headers and half its body, then close the connection. */
  drop?: boolean;
}

/** What a fault hook is told of a request. */
export interface StandInRequest {
  /** 1 for the first completion request the server got, and so on. */
  number: number;
  body: Record<string, unknown>;
}

export interface StandInOptions {
  /** The model served: `builtin:small` (default), `builtin:tiny`, or any `loadNodeModelPolicy` spec. */
  model?: string;
  /** The name requests must give as `model`; default: `model`. */
  servedName?: string;
  port?: number;
  host?: string;
  /** Wait this long before every completion answer. */
  delayMs?: number;
  /** Faults per request (tests); may wait before it decides (a test holding requests until several are in flight). */
  fault?: (request: StandInRequest) => StandInFault | null | Promise<StandInFault | null>;
  /** A key requests must send as `Authorization: Bearer <key>`. */
  apiKey?: string;
}

export interface StandInStats {
  /** Completion requests received. */
  requests: number;
  /** Completion requests being handled now (their delay included), and the most at once. */
  inFlight: number;
  maxInFlight: number;
  /** What each completion request was answered with, in the order they came: a status, or "dropped". */
  answers: (number | "dropped")[];
}

export interface StandInServer {
  /** The API root: `http://127.0.0.1:<port>/v1`, a server policy's `base_url`. */
  url: string;
  port: number;
  stats: StandInStats;
  /** Zeroes the stats (a test's own counts). */
  resetStats(): void;
  close(): Promise<void>;
}

/** A fault hook for counts of faults, given in turn to the first requests: 429s, then 500s, then dropped answers. */
export function countedFaults(counts: { tooManyRequests?: number; retryAfterSeconds?: number; serverErrors?: number; dropped?: number }): NonNullable<StandInOptions["fault"]> {
  let tooMany = counts.tooManyRequests ?? 0;
  let errors = counts.serverErrors ?? 0;
  let dropped = counts.dropped ?? 0;
  return () => {
    if (tooMany > 0) {
      tooMany -= 1;
      return { status: 429, retryAfterSeconds: counts.retryAfterSeconds ?? 1 };
    }
    if (errors > 0) {
      errors -= 1;
      return { status: 500 };
    }
    if (dropped > 0) {
      dropped -= 1;
      return { drop: true };
    }
    return null;
  };
}

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, OPTIONS",
  "access-control-allow-headers": "authorization, content-type",
  "access-control-max-age": "600",
};

const MAX_BODY_BYTES = 16 * 2 ** 20;

export async function startStandInServer(options: StandInOptions = {}): Promise<StandInServer> {
  const modelSpec = options.model ?? "builtin:small";
  const servedName = options.servedName ?? modelSpec;
  // One model, and one policy per sampling setting on it: they share the model's decode engine, so requests in
  // flight at once are decoded in one batch, as an inference server batches them.
  const loaded = await loadNodeModel({ model: modelSpec });
  const policies = new Map<string, ModelPolicy>();
  const policyFor = (sampling: CompletionRequest["sampling"]) => {
    const key = JSON.stringify(sampling);
    let policy = policies.get(key);
    if (!policy) {
      policy = new ModelPolicy(loaded.runtime, loaded.model, loaded.tokenizer, { ...sampling, seed: 0 });
      policies.set(key, policy);
    }
    return policy;
  };
  const { tokenizer } = policyFor({});

  const stats: StandInStats = { requests: 0, inFlight: 0, maxInFlight: 0, answers: [] };
  let completions = 0;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { ...CORS, "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
    res.end(text);
  };
  const sendError = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) =>
    send(res, status, { object: "error", message, type: status === 404 ? "NotFoundError" : status === 400 ? "BadRequestError" : "ServerError", code: status }, headers);

  const handleCompletion = async (req: IncomingMessage, res: ServerResponse) => {
    const number = ++stats.requests;
    stats.inFlight += 1;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    let answered: number | "dropped" = 0;
    try {
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        answered = 401;
        return sendError(res, 401, "the stand-in server wants Authorization: Bearer <its key>");
      }
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req));
      } catch (e) {
        answered = 400;
        return sendError(res, 400, `the request body is not JSON: ${(e as Error).message}`);
      }
      const fault = (await options.fault?.({ number, body: body as Record<string, unknown> })) ?? null;
      const delay = (options.delayMs ?? 0) + (fault?.delayMs ?? 0);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      if (fault?.status) {
        answered = fault.status;
        const headers: Record<string, string> = fault.status === 429 ? { "retry-after": String(fault.retryAfterSeconds ?? 1) } : {};
        return sendError(res, fault.status, `injected fault: HTTP ${fault.status} (stand-in server)`, headers);
      }
      let request: CompletionRequest;
      try {
        request = readCompletionRequest(body, servedName, tokenizer);
      } catch (e) {
        const status = e instanceof CompletionRequestError ? e.status : 400;
        answered = status;
        return sendError(res, status, (e as Error).message);
      }
      const policy = policyFor(request.greedy ? {} : request.sampling);
      const answer = await complete(request, policy, tokenizer, servedName, `cmpl-stand-in-${++completions}`);
      if (fault?.drop) {
        answered = "dropped";
        return dropMidAnswer(res, JSON.stringify(answer));
      }
      answered = 200;
      send(res, 200, answer);
    } catch (e) {
      answered = 500;
      if (!res.headersSent) sendError(res, 500, `the stand-in server failed: ${(e as Error).message}`);
    } finally {
      stats.inFlight -= 1;
      stats.answers.push(answered);
    }
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!.replace(/\/+$/, "");
    if (req.method === "OPTIONS") {
      res.writeHead(204, CORS);
      return res.end();
    }
    if (req.method === "GET" && path === "/v1/models") {
      return send(res, 200, { object: "list", data: [{ id: servedName, object: "model", created: 0, owned_by: "rollout-lab stand-in" }] });
    }
    if (req.method === "POST" && path === "/v1/completions") return void handleCompletion(req, res);
    sendError(res, 404, `the stand-in server has no ${req.method} ${path} (it serves GET /v1/models and POST /v1/completions)`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}/v1`,
    port,
    stats,
    resetStats: () => Object.assign(stats, { requests: 0, inFlight: 0, maxInFlight: 0, answers: [] }),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await loaded.model.dispose();
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`more than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** The answer's headers and half its body, then the connection closed: what a server that dies mid-answer sends. */
function dropMidAnswer(res: ServerResponse, text: string): void {
  const bytes = Buffer.from(text);
  res.writeHead(200, { ...CORS, "content-type": "application/json", "content-length": String(bytes.length) });
  res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
}

const USAGE =
  "usage: npm run serve:stand-in -- [--port 8000] [--host 127.0.0.1] [--model builtin:small] [--served-name NAME] [--delay-ms N] " +
  "[--fail-429 N] [--retry-after S] [--fail-500 N] [--drop N] [--api-key-env VAR]";

/** The command line's options. */
export function parseStandInArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): StandInOptions {
  const options: StandInOptions = { port: 8000 };
  const counts: Parameters<typeof countedFaults>[0] = {};
  const value = (i: number, flag: string) => {
    const v = argv[i];
    if (v === undefined || v.startsWith("--")) throw new UsageError(`${flag} needs a value`, USAGE);
    return v;
  };
  const count = (i: number, flag: string) => {
    const v = value(i, flag);
    if (!/^\d+$/.test(v)) throw new UsageError(`${flag}: expected an integer ≥ 0, got '${v}'`, USAGE);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === "--port") options.port = count(++i, flag);
    else if (flag === "--host") options.host = value(++i, flag);
    else if (flag === "--model") options.model = value(++i, flag);
    else if (flag === "--served-name") options.servedName = value(++i, flag);
    else if (flag === "--delay-ms") options.delayMs = count(++i, flag);
    else if (flag === "--fail-429") counts.tooManyRequests = count(++i, flag);
    else if (flag === "--retry-after") counts.retryAfterSeconds = count(++i, flag);
    else if (flag === "--fail-500") counts.serverErrors = count(++i, flag);
    else if (flag === "--drop") counts.dropped = count(++i, flag);
    else if (flag === "--api-key-env") {
      const name = value(++i, flag);
      const key = env[name];
      if (!key) throw new UsageError(`--api-key-env: the environment variable ${name} is not set`, USAGE);
      options.apiKey = key;
    } else if (flag === "--help" || flag === "-h") throw new UsageError(null, USAGE);
    else throw new UsageError(`unknown option ${flag}`, USAGE);
  }
  if (Object.keys(counts).length) options.fault = countedFaults(counts);
  return options;
}

async function main(argv: string[]): Promise<number> {
  let options: StandInOptions;
  try {
    options = parseStandInArgs(argv);
  } catch (e) {
    const detail = (e as UsageError).detail;
    process.stderr.write(`${detail ? `error: ${detail}\n` : ""}${USAGE}\n`);
    return detail ? 2 : 0;
  }
  const server = await startStandInServer(options);
  process.stdout.write(
    `stand-in inference server (the lab's ${options.model ?? "builtin:small"}, random weights; not a real inference server)\n` +
      `  base_url: ${server.url}   model: ${options.servedName ?? options.model ?? "builtin:small"}\n`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.close();
  return 0;
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
