/**
 * The lab's errors share one base: `LabError`, with a `code` that says what kind of failure it is in the same
 * words in every layer (and on the wire between the page and its Workers), and a `name` each subclass sets
 * (minified builds rename classes; a literal name survives). `abortError()` is the one way to say "cancelled".
 *
 * Codes in use: `aborted`, `invalid_scenario`, `invalid_suite`, `invalid_golden`, `invalid_saved_run`,
 * `invalid_utf8`, `invalid_tool_schema`, `invalid_module`, `usage`, `generation_failed`, `rollout_failed`,
 * `remote_environment`, `step_timeout`, `step_return`, `deadline`, `device_lost`, `browser_setup`, `stop_timeout`,
 * `worker_gone`, `merge_failed`, `shell_syntax`, `conformance_adapter`, `no_post_process`, and the workspace file system's POSIX codes
 * (`ENOENT`, …).
 */

export class LabError extends Error {
  override name = "LabError";
  readonly code: string = "lab_error";
}

/** The error a cancelled operation rejects with: `name` "AbortError", as the platform's own. */
export class AbortError extends LabError {
  override name = "AbortError";
  override readonly code = "aborted";
}

export function abortError(message = "cancelled"): AbortError {
  return new AbortError(message);
}

/** Whether an error (ours, the platform's DOMException, onnxruntime's) means the operation was cancelled. */
export function isAbortError(error: unknown, signal?: AbortSignal): boolean {
  return Boolean(signal?.aborted) || (error instanceof Error && error.name === "AbortError");
}

/**
 * What an environment's `globalPostProcessAndMetrics` throws when it turns out to have none after all (a remote
 * server without `/post_process`): the lab then shows no environment metrics for it, rather than an error.
 */
export class NoPostProcessError extends LabError {
  override name = "NoPostProcessError";
  override readonly code = "no_post_process";
}
