// The environments' own metrics after a run (issue 18): each task's global_post_process_and_metrics given that task's
// samples as one batch of columns; kept beside the result, never in it; one environment's failure is its own; a remote
// server's /post_process (a 404: none; a 500: its error with the server's traceback).

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvironmentInterface } from "../core/index.js";
import { environmentMetrics, postProcessBatch, type EnvironmentMetrics } from "./environment-metrics.js";
import { runScenario } from "./run.js";
import { parseScenario } from "./schema.js";

const puzzle = (extra: Record<string, unknown> = {}) =>
  parseScenario({
    mode: "sync",
    max_seq_len: 2000,
    max_rollout_turns: 8,
    envs: { p: { env: "sliding_puzzle", config: {} } },
    dataset: { task_name: "p", size: 4, seed: 1, config: { size: 2, shuffle_moves: 3, max_moves: 6 } },
    policy: { kind: "oracle", seed: 0, error_rate: 0.5 },
    ...extra,
  });

describe("environment metrics after a run", () => {
  it("the built-in puzzle's success rate over its samples, handed over beside the result and not in it", async () => {
    let reports: EnvironmentMetrics[] = [];
    const result = await runScenario(puzzle(), { onEnvironmentMetrics: (r) => (reports = r) });
    const solved = result.samples.filter((s) => s.total_reward === 1).length;
    expect(reports).toEqual([{ task: "p", metrics: { sliding_puzzle_success_rate: solved / 4 } }]);
    const plain = await runScenario(puzzle());
    expect(Object.keys(result.metrics)).toEqual(Object.keys(plain.metrics));
    expect(Object.keys(result.metrics).some((k) => k.includes("success_rate"))).toBe(false);
  });

  it("a task's batch: the columns of its samples in input order, and `rewards` as the trainers name the totals", async () => {
    const result = await runScenario(puzzle());
    const batch = postProcessBatch(result, "p");
    expect(batch.idx).toEqual([0, 1, 2, 3]);
    expect(batch.rewards).toEqual(result.samples.map((s) => s.total_reward));
    expect(batch.total_reward).toEqual(batch.rewards);
    expect((batch.message_log as { token_ids: number[] }[][])[0]![0]!.token_ids.length).toBeGreaterThan(0);
    expect(postProcessBatch(result, "other").idx).toBeUndefined();
  });

  it("one environment's failure is its own; a metric that is not a finite number is named; none without the method", async () => {
    const result = await runScenario(puzzle());
    const envs: Record<string, EnvironmentInterface> = {
      throws: { step: () => ({}) as never, globalPostProcessAndMetrics: () => { throw new Error("KeyError: 'rewards'"); } },
      nan: { step: () => ({}) as never, globalPostProcessAndMetrics: (b) => [b, { accuracy: Number.NaN }] },
      fine: { step: () => ({}) as never, globalPostProcessAndMetrics: async (b) => [b, { n: b.idx!.length, flag: true as unknown as number }] },
      none: { step: () => ({}) as never },
    };
    const relabel = (task: string) => ({ ...result, samples: result.samples.map((s) => ({ ...s, task_name: task })) });
    const reports = (await Promise.all(Object.keys(envs).map((task) => environmentMetrics(relabel(task), { [task]: envs[task]! })))).flat();
    expect(reports).toEqual([
      { task: "throws", error: "KeyError: 'rewards'" },
      { task: "nan", error: "global_post_process_and_metrics of 'nan' returned metrics.accuracy = null, not a finite number" },
      { task: "fine", metrics: { n: 4, flag: 1 } },
    ]);
  });
});

describe("a remote environment's /post_process", () => {
  let server: Server;
  let url = "";
  let answer: () => { status: number; body: unknown } = () => ({ status: 404, body: { error: "no such path" } });
  const seen: unknown[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        if (req.url === "/post_process") seen.push(JSON.parse(body));
        const reply = req.url === "/step" ? { status: 200, body: stepAnswer(JSON.parse(body)) } : answer();
        res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => void server.close());

  // One turn: every sample ends with reward 1.
  const stepAnswer = (body: { metadata: unknown[] }) => {
    const n = body.metadata.length;
    return { observations: Array(n).fill({ role: "environment", content: "ok" }), metadata: Array(n).fill(null), next_stop_strings: null, rewards: Array(n).fill(1), terminateds: Array(n).fill(true), answers: null };
  };
  const remote = () =>
    parseScenario({
      mode: "async",
      max_seq_len: 200,
      max_rollout_turns: 2,
      envs: { r: { env: "http", config: { url } } },
      samples: [0, 1].map(() => ({ task_name: "r", message_log: [{ role: "user", content: "hi" }] })),
      policy: { kind: "scripted", responses: [["a"], ["b"]] },
    });
  const run = async (): Promise<EnvironmentMetrics[]> => {
    const asked: { reports: EnvironmentMetrics[] | null } = { reports: null };
    await runScenario(remote(), { onEnvironmentMetrics: (r) => void (asked.reports = r) });
    return asked.reports!;
  };

  it("a 404 says the server has none: no metrics, no error", async () => {
    answer = () => ({ status: 404, body: { error: "no such path" } });
    expect(await run()).toEqual([]);
  });

  it("posts the task's batch and shows the metrics it answers", async () => {
    seen.length = 0;
    answer = () => ({ status: 200, body: { metrics: { accuracy: 1, turns: 2 } } });
    expect(await run()).toEqual([{ task: "r", metrics: { accuracy: 1, turns: 2 } }]);
    const { batch } = seen[0] as { batch: Record<string, unknown[]> };
    expect(batch.rewards).toEqual([1, 1]);
    expect(batch.task_name).toEqual(["r", "r"]);
  });

  it("a failure carries the server's error and traceback", async () => {
    answer = () => ({ status: 500, body: { error: "ZeroDivisionError: division by zero", traceback: 'Traceback (most recent call last):\n  File "envs.py", line 9, in global_post_process_and_metrics\nZeroDivisionError: division by zero\n' } });
    const [report] = await run();
    expect(report).toEqual({
      task: "r",
      error: `${url}/post_process answered HTTP 500: ZeroDivisionError: division by zero\nTraceback (most recent call last):\n  File "envs.py", line 9, in global_post_process_and_metrics\nZeroDivisionError: division by zero`,
    });
  });
});
