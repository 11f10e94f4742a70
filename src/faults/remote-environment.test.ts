/**
 * A remote environment (`"env": "http"`) that misbehaves, against real HTTP servers on 127.0.0.1 (node:http) started
 * and closed by the test: a step that never answers is cut at its deadline and its request aborted (the server sees
 * the connection close); `/dataset` and `/info` have deadlines of their own; a redirect, to another host or not, is
 * refused, naming where it pointed, and nothing reaches the other host; a connection closed in the middle of an
 * answer, an answer nested too deep and a reward of `1e400` are errors naming the URL or the sample.
 *
 * Nothing here waits for time to pass to see something happen: the deadlines are short, and each check waits for the
 * event it expects (the server seeing a request closed), bounded by the test's own timeout.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchRemoteInfo, httpEnvironment } from "../envs/http/index.js";
import { runScenario } from "../scenario/run.js";
import { parseScenario } from "../scenario/schema.js";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

interface TestServer {
  url: string;
  /** Requests seen, by path. */
  seen: string[];
  /** Resolves when a request to `path` has been closed (answered or aborted by the client). */
  closed(path: string): Promise<{ answered: boolean }>;
  server: Server;
}

async function startServer(handler: Handler): Promise<TestServer> {
  const seen: string[] = [];
  const waiting = new Map<string, ((v: { answered: boolean }) => void)[]>();
  const done = new Map<string, { answered: boolean }>();
  const server = createServer((req, res) => {
    const path = req.url ?? "";
    seen.push(path);
    res.on("close", () => {
      const outcome = { answered: res.writableFinished };
      done.set(path, outcome);
      for (const resolve of waiting.get(path) ?? []) resolve(outcome);
      waiting.delete(path);
    });
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => handler(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    server,
    closed: (path) =>
      done.has(path)
        ? Promise.resolve(done.get(path)!)
        : new Promise((resolve) => waiting.set(path, [...(waiting.get(path) ?? []), resolve])),
  };
}

const stop = (s: TestServer) =>
  new Promise<void>((resolve) => {
    s.server.closeAllConnections();
    s.server.close(() => resolve());
  });

const json = (res: ServerResponse, value: unknown, status = 200) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(typeof value === "string" ? value : JSON.stringify(value));
};

/** A healthy step answer for `n` samples, with `reward` given as JSON text (so `1e400` can be sent). */
const stepAnswer = (n: number, reward = "1") =>
  `{"observations": [${new Array(n).fill('{"role": "environment", "content": "ok"}').join(",")}], "metadata": [${new Array(n).fill("null").join(",")}], ` +
  `"next_stop_strings": null, "rewards": [${new Array(n).fill(reward).join(",")}], "terminateds": [${new Array(n).fill("true").join(",")}], "answers": null}`;

const scenario = (url: string, extra: Record<string, unknown> = {}, config: Record<string, unknown> = {}) =>
  parseScenario({
    mode: "sync",
    max_seq_len: 256,
    max_rollout_turns: 2,
    envs: { remote: { env: "http", config: { url, ...config } } },
    samples: [{ task_name: "remote", message_log: [{ role: "user", content: "q" }] }],
    policy: { kind: "scripted", responses: [["a", "b"]] },
    ...extra,
  });

const environments = (name: string) => (name === "http" ? httpEnvironment : undefined);

describe("a remote environment that misbehaves", () => {
  const servers: TestServer[] = [];
  let hanging: TestServer;
  let other: TestServer;
  let main: TestServer;

  beforeAll(async () => {
    // Never answers anything.
    hanging = await startServer(() => {});
    // Another origin (another port): it must never be reached through a redirect.
    other = await startServer((_req, res) => json(res, stepAnswer(1)));
    main = await startServer((req, res) => {
      switch (req.url) {
        case "/cross/step":
          res.writeHead(307, { location: `${other.url}/step` });
          return res.end();
        case "/same/step":
          res.writeHead(308, { location: "/ok/step" });
          return res.end();
        case "/ok/step":
          return json(res, stepAnswer(1));
        case "/cut/step":
          // Promises 1,000 bytes, sends 10, and closes the connection.
          res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
          res.write('{"observat');
          return void setImmediate(() => res.socket?.destroy());
        case "/deep/step":
          return json(res, stepAnswer(1).replace('"metadata": [null]', `"metadata": [${'{"a":'.repeat(5000)}1${"}".repeat(5000)}]`));
        case "/huge/step":
          return json(res, stepAnswer(1, "1e400"));
        case "/array/step":
          return json(res, "[]");
        case "/terminated-string/step":
          return json(res, stepAnswer(1).replace('"terminateds": [true]', '"terminateds": ["false"]'));
        default:
          return json(res, { error: `no route ${req.url}` }, 404);
      }
    });
    servers.push(hanging, other, main);
  });

  afterAll(async () => {
    await Promise.all(servers.map(stop));
  });

  it("a step that never answers ends its sample at env_step_timeout_ms, and its request is aborted (not left open)", async () => {
    const result = await runScenario(scenario(`${hanging.url}/a`, { env_step_timeout_ms: 300 }), { environments });
    expect(result.samples[0]!.termination).toBe("error");
    expect(result.samples[0]!.error).toBe("environment 'remote' step timed out after 300 ms");
    // The server sees the request closed without an answer: the client aborted it.
    expect(await hanging.closed("/a/step")).toEqual({ answered: false });
  }, 30_000);

  it("without env_step_timeout_ms the step has the config's timeout_ms (else 120 s) as its deadline", async () => {
    const result = await runScenario(scenario(`${hanging.url}/b`, {}, { timeout_ms: 300 }), { environments });
    expect(result.samples[0]!.error).toBe(`environment 'remote' step failed: ${hanging.url}/b/step: no complete answer within 300 ms; the request was aborted`);
    expect(await hanging.closed("/b/step")).toEqual({ answered: false });
  }, 30_000);

  it("/dataset has a deadline (the config's timeout_ms, else 120 s) and names the field and the URL", async () => {
    const s = parseScenario({
      ...scenario(`${hanging.url}/c`, {}, { timeout_ms: 300 }),
      samples: undefined,
      dataset: { task_name: "remote", size: 2, seed: 0 },
    });
    await expect(runScenario(s, { environments })).rejects.toThrow(
      `dataset.config: ${hanging.url}/c/dataset: no complete answer within 300 ms; the request was aborted`,
    );
    expect(await hanging.closed("/c/dataset")).toEqual({ answered: false });
  }, 30_000);

  it("/info (the lab's Connect) has a deadline (10 s by default)", async () => {
    await expect(fetchRemoteInfo(`${hanging.url}/d`, 300)).rejects.toThrow(`${hanging.url}/d/info: no complete answer within 300 ms; the request was aborted`);
    expect(await hanging.closed("/d/info")).toEqual({ answered: false });
  }, 30_000);

  it("a timeout_ms a timer cannot wait is a config error naming the field", async () => {
    await expect(runScenario(scenario(main.url, {}, { timeout_ms: 2 ** 31 }), { environments })).rejects.toThrow(
      "envs.remote.config: http config.timeout_ms: expected an integer number of ms from 1 to 2147483647, got 2147483648",
    );
  });

  it("a redirect to another host is refused, naming both; the step's body never reaches the other host", async () => {
    const result = await runScenario(scenario(`${main.url}/cross`), { environments });
    expect(result.samples[0]!.termination).toBe("error");
    expect(result.samples[0]!.error).toBe(
      `environment 'remote' step failed: ${main.url}/cross/step answered with a redirect (HTTP 307 to ${other.url}/step); ` +
        "remote environments' redirects are not followed (a step's samples would go wherever it points): configure the URL it redirects to",
    );
    expect(other.seen).toEqual([]);
  });

  it("a redirect to the same host is refused as well (every redirect is, as in the browser)", async () => {
    const result = await runScenario(scenario(`${main.url}/same`), { environments });
    expect(result.samples[0]!.error).toContain(`${main.url}/same/step answered with a redirect (HTTP 308 to ${main.url}/ok/step)`);
    expect(main.seen).not.toContain("/ok/step");
  });

  it("a connection closed in the middle of an answer names the URL (not only 'terminated')", async () => {
    const result = await runScenario(scenario(`${main.url}/cut`), { environments });
    expect(result.samples[0]!.error).toMatch(
      new RegExp(`^environment 'remote' step failed: ${main.url.replace(/\./g, "\\.")}/cut/step: the answer \\(HTTP 200\\) could not be read to its end: \\S`),
    );
  });

  it("an answer nested 5,000 deep names the URL and the path", async () => {
    const result = await runScenario(scenario(`${main.url}/deep`), { environments });
    expect(result.samples[0]!.error).toBe(
      `environment 'remote' step failed: ${main.url}/deep/step answered JSON the lab cannot take: metadata[0].a.a.a.a.a.a.a.a…: nested deeper than 100 levels`,
    );
  });

  it("a reward of 1e400 (Infinity once parsed) fails the sample like NaN, instead of total_reward null", async () => {
    const result = await runScenario(scenario(`${main.url}/huge`), { environments });
    expect(result.samples[0]!.termination).toBe("error");
    expect(result.samples[0]!.error).toBe("environment 'remote' returned an invalid reward for sample 0: Infinity is not a finite number");
  });

  it("an answer that is an array, and terminateds [\"false\"], are named as what they are", async () => {
    expect((await runScenario(scenario(`${main.url}/array`), { environments })).samples[0]!.error).toBe(
      "environment 'remote' step returned an array, expected an object",
    );
    expect((await runScenario(scenario(`${main.url}/terminated-string`), { environments })).samples[0]!.error).toBe(
      `environment 'remote' returned an invalid terminated for sample 0: expected true or false (or the number 0 or 1), got the string "false"`,
    );
  });
});
