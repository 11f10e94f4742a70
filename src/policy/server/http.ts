/**
 * One HTTP request to the inference server: a JSON POST with a deadline, no redirects followed, and every failure
 * named with the URL and told apart by whether trying again may help (429, 5xx, a network failure, a connection
 * closed mid-answer) or not (any other status, a redirect, an answer that is not JSON, the deadline).
 */

import { describeJsonValueProblem, findJsonValueProblem, LabError } from "../../core/index.js";

export class ServerRequestError extends LabError {
  override name = "ServerRequestError";
  override readonly code = "server_request";
  constructor(
    message: string,
    /** Whether the same request may succeed if tried again. */
    readonly retryable: boolean,
    /** The HTTP status, when the server answered one. */
    readonly status?: number,
    /** The server's `Retry-After` header, as it sent it. */
    readonly retryAfter?: string | null,
  ) {
    super(message);
  }
}

/** Why this attempt's own controller was aborted: the deadline, not the caller. */
class Deadline extends Error {}

export interface PostOptions {
  timeoutMs: number;
  /** The caller's cancellation: aborts the request; the caller tells it apart from a failure. */
  signal?: AbortSignal;
  apiKey?: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** An error's message with its cause's: fetch's `fetch failed` and `terminated` say why only there. */
function errorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  const why = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : "";
  return why && !e.message.includes(why) ? `${e.message} (${why})` : e.message;
}

/** What an error answer says: OpenAI's `{"error": {"message"}}`, vLLM's `{"message"}`, TGI's `{"error": "…"}`, or its text. */
function errorDetail(text: string): string {
  try {
    const said = errorInBody(JSON.parse(text));
    if (said !== null) return said;
  } catch {}
  return text.trim().slice(0, 500);
}

/** The error message a parsed answer carries in one of those shapes, or null. */
export function errorInBody(body: unknown): string | null {
  if (typeof body !== "object" || body === null) return null;
  const { error, message, detail } = body as { error?: unknown; message?: unknown; detail?: unknown };
  if (typeof error === "string") return error;
  if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string") return (error as { message: string }).message;
  if (typeof message === "string") return message;
  if (typeof detail === "string") return detail;
  return null;
}

/** POSTs `body` to `url` and returns the parsed JSON answer, or throws a ServerRequestError (an AbortError when `signal` was). */
export async function postJson(url: string, body: unknown, options: PostOptions): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Deadline()), options.timeoutMs);
  const outer = options.signal;
  const cancel = () => controller.abort(outer?.reason);
  if (outer?.aborted) cancel();
  else outer?.addEventListener("abort", cancel, { once: true });
  // A failure while the request was aborted: the deadline (named, not retried) or the caller's cancellation.
  const failure = (e: unknown, what: string, retryable: boolean): Error => {
    if (outer?.aborted) return e instanceof Error ? e : new Error(String(e));
    if (controller.signal.aborted) return new ServerRequestError(`${url}: no complete answer within ${options.timeoutMs} ms; the request was aborted`, false);
    return new ServerRequestError(`${what}: ${errorText(e)}`, retryable);
  };
  try {
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        body: JSON.stringify(body),
        redirect: "manual",
        signal: controller.signal,
      });
    } catch (e) {
      throw failure(e, `${url}: cannot reach the server`, true);
    }
    if (response.type === "opaqueredirect" || REDIRECTS.has(response.status)) {
      const location = response.headers.get("location");
      void response.body?.cancel().catch(() => undefined);
      const target = location ? ` to ${new URL(location, url).href}` : "";
      throw new ServerRequestError(
        `${url} answered with a redirect${response.status ? ` (HTTP ${response.status}${target})` : ""}; an inference server's redirects are ` +
          "not followed (the prompts would go wherever it points): set base_url to the address it redirects to",
        false,
        response.status || undefined,
      );
    }
    let text: string;
    try {
      text = await response.text();
    } catch (e) {
      throw failure(e, `${url}: the answer (HTTP ${response.status}) could not be read to its end`, true);
    }
    if (!response.ok) {
      const detail = errorDetail(text);
      const retryable = response.status === 429 || response.status >= 500;
      throw new ServerRequestError(`${url} answered HTTP ${response.status}${detail ? `: ${detail}` : ""}`, retryable, response.status, response.headers.get("retry-after"));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new ServerRequestError(`${url} answered with text that is not JSON (${(e as Error).message}): ${text.slice(0, 200)}`, false, response.status);
    }
    const shape = findJsonValueProblem(parsed);
    if (shape) throw new ServerRequestError(`${url} answered JSON the lab cannot take: ${describeJsonValueProblem(shape, [], "(answer)")}`, false, response.status);
    return parsed;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", cancel);
  }
}
