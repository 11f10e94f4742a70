/**
 * The remote-environment adapter: an environment served over HTTP by any process in any language, stepped by the
 * lab as if it were in-process. The protocol (`docs/remote-environments.md`) mirrors the core's interface:
 *
 * - `GET  <url>/info`    → `{"name", "title"?, "description"?, "default_task_name"?}`
 * - `POST <url>/dataset` `{"task_name", "size", "seed", "config"}` → `{"data": [datum spec, ...]}`
 * - `POST <url>/step`    `{"message_log_batch", "metadata"}` → the fields of `EnvironmentReturn`
 *   (`observations`, `metadata`, `next_stop_strings`, `rewards`, `terminateds`, `answers`)
 * - `POST <url>/post_process` `{"batch"}` → `{"metrics"}` (optional: after a run; a 404 means none)
 *
 * JSON in and out. A non-2xx answer is an error whose text (or JSON `error` field) the lab shows; a malformed
 * step answer fails its samples with the field named, like any environment's.
 *
 * Every request has a deadline and is aborted at it (its connection closed, so nothing is left waiting for the
 * server): `/step` the scenario's `env_step_timeout_ms` (the core aborts the step's signal then), else the config's
 * `timeout_ms`, else `REMOTE_STEP_TIMEOUT_MS`; `/dataset` the config's `timeout_ms`, else
 * `REMOTE_DATASET_TIMEOUT_MS`; `/info` `REMOTE_INFO_TIMEOUT_MS`. No redirect is followed (`redirect: "manual"`): a
 * 3xx answer is an error naming where it pointed, so a step's body (the samples' logs and state) never goes to a
 * host the scenario did not name; in the browser a redirect's target is hidden from the page, so every redirect is
 * refused there too, and same-origin ones alike everywhere, so a scenario behaves the same in Node and the lab.
 * Every error names the URL, failures while reading an answer's body too (a connection closed mid-answer). An answer
 * nested deeper than the lab's JSON depth limit, or with a `__proto__` key, is refused with its path
 * (src/core/json-value.ts).
 */

import { LabError, NoPostProcessError } from "../../core/index.js";
import { describeJsonValueProblem, findJsonValueProblem, MAX_TIMEOUT_MS, type EnvironmentReturn, type StepContext } from "../../core/index.js";
import { checkConfigKeys } from "../config.js";
import type { DatasetDatum, EnvironmentDefinition } from "../types.js";

export const HTTP_ENVIRONMENT_NAME = "http";

/** The deadline of `GET /info` (the lab's Connect check): a server that is up answers it at once. */
export const REMOTE_INFO_TIMEOUT_MS = 10_000;
/** The deadline of `POST /dataset` without a `timeout_ms` in the config. */
export const REMOTE_DATASET_TIMEOUT_MS = 120_000;
/** The deadline of `POST /step` when the scenario sets no `env_step_timeout_ms` and the config no `timeout_ms`. */
export const REMOTE_STEP_TIMEOUT_MS = 120_000;

export interface RemoteEnvironmentInfo {
  name: string;
  title?: string;
  description?: string;
  default_task_name?: string;
  /** Whether the server answers `/post_process` (its `global_post_process_and_metrics`). */
  post_process?: boolean;
  /** Set by the Python bridge (`python -m rollout_lab_bridge`): what it serves, and how. */
  bridge?: { version?: string; target?: string; ray?: "ray" | "stand-in" | null; torch?: boolean };
}

/** The environment's base URL from its config, checked. */
export function remoteUrl(config: Record<string, unknown>, where = "http config"): string {
  checkConfigKeys(where, config, ["url", "timeout_ms"]);
  const url = config.url;
  if (typeof url !== "string") throw new Error(`${where}.url: expected the environment server's URL, got ${JSON.stringify(url)}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${where}.url: '${url}' is not a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error(`${where}.url: '${url}' is not http(s)`);
  return url.replace(/\/+$/, "");
}

/** The config's `timeout_ms` (checked: a timer cannot wait longer than `MAX_TIMEOUT_MS`), or undefined. */
export function remoteTimeoutMs(config: Record<string, unknown>, where = "http config"): number | undefined {
  const value = config.timeout_ms;
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_TIMEOUT_MS) {
    throw new Error(`${where}.timeout_ms: expected an integer number of ms from 1 to ${MAX_TIMEOUT_MS}, got ${JSON.stringify(value)}`);
  }
  return value;
}

export class RemoteEnvironmentError extends LabError {
  override name = "RemoteEnvironmentError";
  override readonly code = "remote_environment";
  /** The HTTP status of a non-2xx answer (absent for other failures). */
  status?: number;
}

/** Why the request was aborted at its deadline. */
class DeadlineError extends LabError {
  override name = "DeadlineError";
  override readonly code = "deadline";
}

/** An error's message with its cause's (fetch's `fetch failed` and `terminated` say why only there). */
function errorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  const why = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : "";
  return why && !e.message.includes(why) ? `${e.message} (${why})` : e.message;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

interface CallOptions {
  /** The request's own deadline; absent when `signal` carries it (the rollout aborts it at the step's deadline). */
  timeoutMs?: number;
  /** Aborts the request too (the step's deadline from the rollout). */
  signal?: AbortSignal;
}

/** One call to the server: JSON in, JSON out, a deadline, no redirects, every failure named with the URL. */
async function callRemote(base: string, path: string, body: unknown, options: CallOptions): Promise<unknown> {
  const url = `${base}${path}`;
  const controller = new AbortController();
  const timer = options.timeoutMs !== undefined ? setTimeout(() => controller.abort(new DeadlineError()), options.timeoutMs) : undefined;
  const outer = options.signal;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener("abort", onAbort, { once: true });
  const aborted = (e: unknown, what: string): RemoteEnvironmentError => {
    if (controller.signal.aborted) {
      return new RemoteEnvironmentError(
        controller.signal.reason instanceof DeadlineError
          ? `${url}: no complete answer within ${options.timeoutMs} ms; the request was aborted`
          : `${url}: the request was aborted (${errorText(controller.signal.reason)})`,
      );
    }
    return new RemoteEnvironmentError(`${what}: ${errorText(e)}`);
  };
  try {
    let response: Response;
    try {
      response = await fetch(url, {
        ...(body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
        redirect: "manual",
        signal: controller.signal,
      });
    } catch (e) {
      throw aborted(e, `cannot reach ${url}`);
    }
    if (response.type === "opaqueredirect" || REDIRECTS.has(response.status)) {
      const location = response.headers.get("location");
      void response.body?.cancel().catch(() => undefined);
      const target = location ? ` to ${new URL(location, url).href}` : "";
      throw new RemoteEnvironmentError(
        `${url} answered with a redirect${response.status ? ` (HTTP ${response.status}${target})` : ""}; remote environments' redirects are not ` +
          "followed (a step's samples would go wherever it points): configure the URL it redirects to",
      );
    }
    let text: string;
    try {
      text = await response.text();
    } catch (e) {
      throw aborted(e, `${url}: the answer (HTTP ${response.status}) could not be read to its end`);
    }
    if (!response.ok) {
      let detail = text.trim().slice(0, 2000);
      try {
        const parsed = JSON.parse(text) as { error?: unknown; traceback?: unknown };
        if (typeof parsed.error === "string") detail = parsed.error;
        // The server's own traceback (the Python bridge's): where in its code the error was, as a module's stack.
        if (typeof parsed.traceback === "string" && parsed.traceback.trim()) detail = `${detail}\n${parsed.traceback.trimEnd()}`;
      } catch {}
      const error = new RemoteEnvironmentError(`${url} answered HTTP ${response.status}${detail ? `: ${detail}` : ""}`);
      error.status = response.status;
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new RemoteEnvironmentError(`${url} answered with text that is not JSON (${(e as Error).message}): ${text.slice(0, 200)}`);
    }
    const shape = findJsonValueProblem(parsed);
    if (shape) throw new RemoteEnvironmentError(`${url} answered JSON the lab cannot take: ${describeJsonValueProblem(shape, [], "(answer)")}`);
    return parsed;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onAbort);
  }
}

/** What the server says it is (the lab's "Connect" check); `timeoutMs` defaults to `REMOTE_INFO_TIMEOUT_MS`. */
export async function fetchRemoteInfo(url: string, timeoutMs = REMOTE_INFO_TIMEOUT_MS): Promise<RemoteEnvironmentInfo> {
  const base = remoteUrl({ url });
  const info = (await callRemote(base, "/info", undefined, { timeoutMs })) as Partial<RemoteEnvironmentInfo> | null;
  if (!info || typeof info !== "object" || typeof info.name !== "string") {
    throw new RemoteEnvironmentError(`${base}/info: expected {"name": string, ...}, got ${JSON.stringify(info)?.slice(0, 200)}`);
  }
  return info as RemoteEnvironmentInfo;
}

export const httpEnvironment: EnvironmentDefinition = {
  name: HTTP_ENVIRONMENT_NAME,
  defaultTaskName: "remote",
  title: "Remote environment (HTTP)",
  description:
    "An environment served over HTTP by another process, in any language: the lab posts each step's message logs " +
    "and metadata to <url>/step and its datasets come from <url>/dataset (docs/remote-environments.md).",
  create(config) {
    const base = remoteUrl(config);
    const configured = remoteTimeoutMs(config);
    return {
      step: async (messageLogBatch, metadata, context?: StepContext) =>
        (await callRemote(
          base,
          "/step",
          { message_log_batch: messageLogBatch, metadata },
          // The scenario's env_step_timeout_ms: the rollout aborts the signal at it (and says so in the sample's
          // error); else the adapter's own deadline.
          context?.signal && context.timeoutMs !== undefined
            ? { signal: context.signal }
            : { timeoutMs: configured ?? REMOTE_STEP_TIMEOUT_MS, signal: context?.signal },
        )) as EnvironmentReturn,
      // After the run: the server's global_post_process_and_metrics, if it has one (a 404 says it has none).
      globalPostProcessAndMetrics: async (batch: Record<string, unknown[]>) => {
        let answer: unknown;
        try {
          answer = await callRemote(base, "/post_process", { batch }, { timeoutMs: configured ?? REMOTE_STEP_TIMEOUT_MS });
        } catch (e) {
          if (e instanceof RemoteEnvironmentError && e.status === 404) throw new NoPostProcessError(`${base}/post_process: none`);
          throw e;
        }
        const metrics = (answer as { metrics?: unknown } | null)?.metrics;
        if (typeof metrics !== "object" || metrics === null || Array.isArray(metrics)) {
          throw new RemoteEnvironmentError(`${base}/post_process: expected {"metrics": {name: number, ...}}, got ${JSON.stringify(answer)?.slice(0, 200)}`);
        }
        return [batch, metrics as Record<string, number>] as [Record<string, unknown[]>, Record<string, number>];
      },
    };
  },
  async generateDataset({ size, seed, config, taskName, envConfig }) {
    const where = `envs.${taskName}.config`;
    const base = remoteUrl(envConfig ?? {}, where);
    const timeoutMs = remoteTimeoutMs(envConfig ?? {}, where) ?? REMOTE_DATASET_TIMEOUT_MS;
    const answer = (await callRemote(base, "/dataset", { task_name: taskName, size, seed, config }, { timeoutMs })) as { data?: unknown } | null;
    if (!answer || !Array.isArray(answer.data)) {
      throw new RemoteEnvironmentError(`${base}/dataset: expected {"data": [datum spec, ...]}, got ${JSON.stringify(answer)?.slice(0, 200)}`);
    }
    return answer.data as DatasetDatum[];
  },
};
