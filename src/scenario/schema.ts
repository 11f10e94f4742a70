/**
 * The scenario file (shared spec `scenario-format.md`): a contract other tools read, so every key is checked and
 * an unknown key is an error, like any other mistake. Errors name the field path and what was expected.
 */

import { LabError } from "../core/index.js";
import { z } from "zod";
import { describeJsonValueProblem, findJsonValueProblem, MAX_TIMEOUT_MS } from "../core/index.js";
import { parseJsonText } from "./json-text.js";
import { unknownKeyProblem } from "./allowed-keys.js";
import { DTYPES } from "../policy/llm/model-source.js";

const int = (what: string) => z.number({ error: `expected ${what}` }).int({ error: `expected ${what}` });
const positiveInt = int("a positive integer").positive({ error: "expected a positive integer" });
// The longest a timer can wait (a longer delay fires after 1 ms): src/core/rollout/options.ts.
const timeoutMs = positiveInt.max(MAX_TIMEOUT_MS, {
  error: `expected at most ${MAX_TIMEOUT_MS} ms (about 24.8 days, the longest a timer can wait)`,
});
const jsonObject = z.record(z.string(), z.unknown(), { error: "expected an object" });

const message = z.strictObject(
  {
    role: z.string({ error: "expected a string" }),
    content: z.string({ error: "expected a string" }),
  },
  { error: "expected a {role, content} message" },
);

const stringList = z.array(z.string({ error: "expected a string" }), { error: "expected a list of strings" });

const messageList = z.array(message, { error: "expected a list of {role, content} messages" }).min(1, {
  error: "expected at least one message",
});

const datum = z
  .strictObject(
    {
      task_name: z.string({ error: "expected a task name (a key of envs)" }),
      idx: int("an integer").optional(),
      message_log: messageList.optional(),
      /** Raw chat messages, rendered with the active chat template (`add_generation_prompt: true`) into the log. */
      messages: messageList.optional(),
      /** OpenAI-style function specs for the template, beside `messages` only. */
      tools: z.array(jsonObject, { error: "expected a list of function specs (objects)" }).optional(),
      extra_env_info: jsonObject.nullable().optional(),
      stop_strings: stringList.nullable().optional(),
      loss_multiplier: z.number({ error: "expected a number" }).optional(),
    },
    { error: "expected a datum spec {task_name, message_log, …}" },
  )
  .superRefine((d, ctx) => {
    if ((d.message_log === undefined) === (d.messages === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: d.message_log === undefined ? ["message_log"] : ["messages"],
        message: "expected exactly one of message_log and messages (raw chat messages)",
      });
    }
    if (d.tools !== undefined && d.messages === undefined) {
      ctx.addIssue({ code: "custom", path: ["tools"], message: "tools go with messages (raw chat messages), not with message_log" });
    }
  });

const dataset = z.strictObject(
  {
    task_name: z.string({ error: "expected a task name (a key of envs)" }),
    size: positiveInt,
    seed: int("an integer"),
    config: jsonObject.optional(),
  },
  { error: "expected {task_name, size, seed, config}" },
);

/** The sampling settings a model and a server policy share. */
const samplingFields = {
  temperature: z.number({ error: "expected a number" }).nonnegative({ error: "expected a number ≥ 0" }).optional(),
  top_k: int("an integer").nonnegative({ error: "expected an integer ≥ 0" }).optional(),
  top_p: z.number({ error: "expected a number" }).gt(0, { error: "expected a number in (0, 1]" }).max(1, {
    error: "expected a number in (0, 1]",
  }).optional(),
  seed: int("an integer").optional(),
};

const policy = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({
      kind: z.literal("scripted"),
      responses: z.array(z.array(z.string({ error: "expected a string" }), { error: "expected a list of strings" }), {
        error: "expected a list (one per sample) of lists of responses",
      }),
    }),
    z.strictObject({
      kind: z.literal("oracle"),
      seed: int("an integer").optional(),
      error_rate: z.number({ error: "expected a number" }).min(0, { error: "expected a rate in [0, 1]" }).max(1, {
        error: "expected a rate in [0, 1]",
      }).optional(),
    }),
    z.strictObject({ kind: z.literal("replay"), file: z.string({ error: "expected a file path" }) }),
    z.strictObject({
      kind: z.literal("model"),
      model: z.string({ error: "expected builtin:trained, builtin:tiny, builtin:small, builtin:tiny-qwen3, a hub id or a local folder" }),
      device: z.enum(["auto", "cpu", "wasm", "webgpu"], { error: "expected auto, cpu, wasm or webgpu" }).optional(),
      dtype: z.enum(DTYPES, { error: `expected ${DTYPES.slice(0, -1).join(", ")} or ${DTYPES.at(-1)}` }).optional(),
      ...samplingFields,
    }),
    // A lab extension (docs/scenarios.md): an OpenAI-compatible inference server (docs/model-policy.md, "Inference servers").
    z.strictObject({
      kind: z.literal("server"),
      base_url: z
        .string({ error: "expected the server's API URL, e.g. http://127.0.0.1:8000/v1" })
        .refine(isHttpUrl, { error: "expected an http(s) URL, e.g. http://127.0.0.1:8000/v1 (requests go to <base_url>/completions)" }),
      model: z.string({ error: "expected the model name the server serves" }).min(1, { error: "expected the model name the server serves" }),
      tokenizer: z
        .string({ error: "expected a model id for the tokenizer (a hub id, a local folder or a built-in)" })
        .min(1, { error: "expected a model id for the tokenizer (a hub id, a local folder or a built-in)" })
        .optional(),
      max_concurrency: positiveInt.max(1024, { error: "expected at most 1024 requests in flight" }).optional(),
      timeout_ms: timeoutMs.optional(),
      max_retries: int("an integer").nonnegative({ error: "expected an integer ≥ 0" }).max(100, { error: "expected at most 100 retries" }).optional(),
      ...samplingFields,
      api_key_env: z
        .string({ error: "expected the name of an environment variable holding the API key (never the key itself)" })
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "expected the name of an environment variable (letters, digits, _), not the key itself" })
        .optional(),
    }),
  ],
  { error: "expected scripted, oracle, replay, model or server" },
);

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

const structured = z.strictObject(
  {
    enabled: z.unknown().optional(),
    backend: z.string({ error: "expected a string" }).optional(),
    thinking_style: z.unknown().optional(),
    decode_skip_special_tokens: z.boolean({ error: "expected true, false or null" }).nullable().optional(),
    constrained_tools: stringList.optional(),
    envelope: z.enum(["fork", "template"], { error: "expected \"fork\" or \"template\"" }).optional(),
  },
  { error: "expected an object (the structured tool-use block) or null" },
);

const invalidAction = z.strictObject(
  {
    enabled: z.boolean({ error: "expected true or false" }).optional(),
    invalid_action_penalty: z.number({ error: "expected a number" }).optional(),
    malformed_thinking_penalty: z.number({ error: "expected a number" }).optional(),
    use_environment_flags: z.boolean({ error: "expected true or false" }).optional(),
    invalid_tool_call_patterns: stringList.optional(),
    thinking_tags: stringList.optional(),
    reward_floor: z.number({ error: "expected a number" }).nullable().optional(),
    penalty_mode: z.enum(["auto", "reward", "advantage", "both"], { error: "expected auto, reward, advantage or both" })
      .nullable()
      .optional(),
    severity_weights: z.record(z.string(), z.number({ error: "expected a number" }), { error: "expected an object of violation type → weight" }).optional(),
    locus_overrides: z
      .record(z.string(), z.enum(["reward", "advantage"], { error: "expected reward or advantage" }), {
        error: "expected an object of violation type → reward or advantage",
      })
      .optional(),
    enable_schema_validation: z.boolean({ error: "expected true or false" }).optional(),
    penalty_step_scale: z
      .strictObject(
        {
          schedule: z.enum(["constant", "linear"], { error: "expected constant or linear" }).optional(),
          start: z.number({ error: "expected a number" }).optional(),
          end: z.number({ error: "expected a number" }).optional(),
          steps: int("an integer").optional(),
        },
        { error: "expected {schedule, start, end, steps}" },
      )
      .optional(),
  },
  { error: "expected an object (the invalid-action penalty block) or null" },
);

export const scenarioSchema = z
  .strictObject(
    {
      mode: z.enum(["sync", "async"], { error: "expected \"sync\" or \"async\"" }),
      max_seq_len: positiveInt,
      max_rollout_turns: positiveInt,
      max_new_tokens: positiveInt.optional(),
      greedy: z.boolean({ error: "expected true or false" }).optional(),
      end_on_response_truncation: z.boolean({ error: "expected true or false" }).optional(),
      fail_fast: z.boolean({ error: "expected true or false" }).optional(),
      env_step_timeout_ms: timeoutMs.optional(),
      envs: z.record(
        z.string(),
        z.strictObject(
          {
            env: z.string({ error: "expected a built-in environment name" }),
            config: jsonObject.optional(),
          },
          { error: "expected {env, config}" },
        ),
        { error: "expected an object: task name → {env, config}" },
      ),
      samples: z.array(datum, { error: "expected a list of datum specs" }).min(1, { error: "expected at least one sample" }).optional(),
      dataset: dataset.optional(),
      policy,
      structured: structured.nullable().optional(),
      invalid_action: invalidAction.nullable().optional(),
      tokenizer: z
        .string({ error: "expected a model id (builtin:tiny-qwen3, a hub id or a local folder)" })
        .min(1, { error: "expected a model id (builtin:tiny-qwen3, a hub id or a local folder)" })
        .optional(),
    },
    { error: "expected a scenario object {mode, max_seq_len, …}" },
  )
  .superRefine((s, ctx) => {
    if ((s.samples === undefined) === (s.dataset === undefined)) {
      ctx.addIssue({ code: "custom", path: ["samples"], message: "expected exactly one of samples and dataset" });
    }
    for (const [i, d] of (s.samples ?? []).entries()) {
      // Own keys only: "constructor" or "toString" is no task of an `envs` that does not name it.
      if (!Object.hasOwn(s.envs, d.task_name)) {
        ctx.addIssue({ code: "custom", path: ["samples", i, "task_name"], message: `'${d.task_name}' is not a key of envs` });
      }
    }
    if (s.tokenizer !== undefined && s.policy.kind === "model" && s.tokenizer !== s.policy.model) {
      ctx.addIssue({
        code: "custom",
        path: ["tokenizer"],
        message: `'${s.tokenizer}' is not the model policy's model '${s.policy.model}': a model policy uses its own tokenizer (drop tokenizer, or name the same model)`,
      });
    }
    if (s.tokenizer !== undefined && s.policy.kind === "server" && s.tokenizer !== (s.policy.tokenizer ?? s.policy.model)) {
      ctx.addIssue({
        code: "custom",
        path: ["tokenizer"],
        message: `'${s.tokenizer}' is not the server policy's tokenizer '${s.policy.tokenizer ?? s.policy.model}': a server policy uses its own (policy.tokenizer, else policy.model); drop tokenizer, or name the same`,
      });
    }
    if (s.dataset && !Object.hasOwn(s.envs, s.dataset.task_name)) {
      ctx.addIssue({ code: "custom", path: ["dataset", "task_name"], message: `'${s.dataset.task_name}' is not a key of envs` });
    }
  });

export type Scenario = z.infer<typeof scenarioSchema>;
export type ScenarioPolicy = Scenario["policy"];

export class ScenarioError extends LabError {
  override name = "ScenarioError";
  override readonly code = "invalid_scenario";
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
  }
}

function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : `${out ? "." : ""}${String(part)}`;
  return out || "(scenario)";
}

/** Each issue as `field.path: what`; an unknown key with the keys `schema` allows there (read along `value`). */
function problemsOf(error: z.ZodError, schema: z.ZodType, value: unknown, prefix: readonly PropertyKey[] = []): string[] {
  return error.issues.map((issue) => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((k) => unknownKeyProblem(fieldPath([...prefix, ...issue.path, k]), schema, value, issue.path)).join("\n");
    }
    return `${fieldPath([...prefix, ...issue.path])}: ${issue.message}`;
  });
}

/**
 * Parses and checks a scenario object; throws ScenarioError listing each problem as `field.path: what`. A value
 * nested deeper than `MAX_JSON_DEPTH` levels or holding a `__proto__` key is refused first, with its path
 * (`samples[0].extra_env_info.a.a…: nested deeper than 100 levels`): see src/core/json-value.ts.
 */
export function parseScenario(value: unknown): Scenario {
  const shape = findJsonValueProblem(value);
  if (shape) throw new ScenarioError([describeJsonValueProblem(shape, [], "(scenario)")]);
  const result = scenarioSchema.safeParse(value);
  if (result.success) return result.data;
  throw new ScenarioError(problemsOf(result.error, scenarioSchema, value));
}

const sampling = z.strictObject(samplingFields);

/**
 * Checks a model policy's sampling settings alone (`temperature`, `top_k`, `top_p`, `seed`), by the rules a scenario's
 * policy block follows; throws ScenarioError naming each field under `source` (`--sampling.top_p: expected …`).
 */
export function parseSampling(value: unknown, source: string): z.infer<typeof sampling> {
  const result = sampling.safeParse(value);
  if (result.success) return result.data;
  throw new ScenarioError(problemsOf(result.error, sampling, value, [source]));
}

const generatedDataset = z.array(datum, { error: "expected a list of datum specs" });

/** Checks datum specs an environment generated (a user's module, a remote server); `source` names it in errors. */
export function parseGeneratedDataset(value: unknown, source: string): z.infer<typeof generatedDataset> {
  // The list stands where a scenario's `samples` stands: one level in (so a datum's extra_env_info may have what a
  // scenario's may). A JS environment's list may share objects.
  const shape = findJsonValueProblem(value, { rootDepth: 2, shared: true });
  if (shape) throw new ScenarioError([describeJsonValueProblem(shape, [source])]);
  const result = generatedDataset.safeParse(value);
  if (result.success) return result.data;
  throw new ScenarioError(problemsOf(result.error, generatedDataset, value, [source]));
}

/**
 * Parses scenario text (JSON), naming the line and column of a syntax error (`a.json: not valid JSON at line 3,
 * column 14: …`); schema errors name the field path. Given the file's bytes, it decodes them as UTF-8 first, and
 * bytes that are not UTF-8 are an error naming the byte (`a.json: not valid UTF-8 at byte 1234 (line 5): …`).
 */
export function parseScenarioText(input: string | Uint8Array, source = "scenario"): Scenario {
  return parseScenario(parseJsonText(input, source, (problem) => new ScenarioError([problem])));
}
