/**
 * The remote-environment adapter: an environment served over HTTP by any process in any language, stepped by the
 * lab as if it were in-process. The protocol (`docs/remote-environments.md`) mirrors the core's interface:
 *
 * - `GET  <url>/info`    → `{"name", "title"?, "description"?, "default_task_name"?}`
 * - `POST <url>/dataset` `{"task_name", "size", "seed", "config"}` → `{"data": [datum spec, ...]}`
 * - `POST <url>/step`    `{"message_log_batch", "metadata"}` → the fields of `EnvironmentReturn`
 *   (`observations`, `metadata`, `next_stop_strings`, `rewards`, `terminateds`, `answers`)
 *
 * JSON in and out. A non-2xx answer is an error whose text (or JSON `error` field) the lab shows; a malformed
 * step answer fails its samples with the field named, like any environment's.
 */

import type { EnvironmentReturn } from "../../core/index.js";
import { checkConfigKeys } from "../config.js";
import type { DatasetDatum, EnvironmentDefinition } from "../types.js";

export const HTTP_ENVIRONMENT_NAME = "http";

export interface RemoteEnvironmentInfo {
  name: string;
  title?: string;
  description?: string;
  default_task_name?: string;
}

/** The environment's base URL from its config, checked. */
export function remoteUrl(config: Record<string, unknown>, where = "http config"): string {
  checkConfigKeys(where, config, ["url"]);
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

export class RemoteEnvironmentError extends Error {
  override name = "RemoteEnvironmentError";
}

/** One call to the server: JSON in, JSON out, every failure named with the URL. */
async function callRemote(base: string, path: string, body?: unknown): Promise<unknown> {
  const url = `${base}${path}`;
  let response: Response;
  try {
    response = await fetch(url, body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  } catch (e) {
    throw new RemoteEnvironmentError(`cannot reach ${url}: ${(e as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) {
    let detail = text.trim().slice(0, 2000);
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (typeof parsed.error === "string") detail = parsed.error;
    } catch {}
    throw new RemoteEnvironmentError(`${url} answered HTTP ${response.status}${detail ? `: ${detail}` : ""}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new RemoteEnvironmentError(`${url} answered with text that is not JSON (${(e as Error).message}): ${text.slice(0, 200)}`);
  }
}

/** What the server says it is (the lab's "Connect" check). */
export async function fetchRemoteInfo(url: string): Promise<RemoteEnvironmentInfo> {
  const base = remoteUrl({ url });
  const info = (await callRemote(base, "/info")) as Partial<RemoteEnvironmentInfo> | null;
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
    return {
      step: async (messageLogBatch, metadata) =>
        (await callRemote(base, "/step", { message_log_batch: messageLogBatch, metadata })) as EnvironmentReturn,
    };
  },
  async generateDataset({ size, seed, config, taskName, envConfig }) {
    const base = remoteUrl(envConfig ?? {}, `envs.${taskName}.config`);
    const answer = (await callRemote(base, "/dataset", { task_name: taskName, size, seed, config })) as { data?: unknown } | null;
    if (!answer || !Array.isArray(answer.data)) {
      throw new RemoteEnvironmentError(`${base}/dataset: expected {"data": [datum spec, ...]}, got ${JSON.stringify(answer)?.slice(0, 200)}`);
    }
    return answer.data as DatasetDatum[];
  },
};
