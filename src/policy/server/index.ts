/** The `server` policy: an OpenAI-compatible inference server as the rollout's policy (docs/model-policy.md, "Inference servers"). */

export { ServerPolicy, rowSeed, type ServerPolicyRuntime } from "./policy.js";
export { completionsUrl, SERVER_DEFAULTS, type ServerPolicySettings } from "./settings.js";
export { DEFAULT_RETRY_TIMING, type RetryTiming } from "./retry.js";
