import type { ReactNode } from "react";
import { RemoteEnvironmentFields } from "../envs/RemoteEnvironmentFields.js";
import { UserEnvironmentsPanel } from "../envs/UserEnvironmentsPanel.js";
import { useUserEnvironments } from "../envs/user-environments.js";
import { useLab } from "../store.js";
import { BUILTIN_MODEL_LABELS, BUILTIN_MODEL_NAMES } from "../../policy/builtin-model/presets.js";
import { isBuiltinSetupEnv, setupProblems, type EnvName, type PolicyKind, type Setup } from "./setup.js";

/** The model picker's built-in entries: the trained model first, then the random-weight ones. */
const BUILTIN_MODEL_CHOICES = BUILTIN_MODEL_NAMES.map((name) => [`builtin:${name}`, BUILTIN_MODEL_LABELS[name].label] as const);

/** A labelled number input bound to one setup value. */
function NumberField(props: { label: string; value: number; step?: number; min?: number; onChange(value: number): void }) {
  return (
    <label className="field">
      <span>{props.label}</span>
      <input
        aria-label={props.label}
        type="number"
        value={props.value}
        step={props.step ?? 1}
        min={props.min}
        onChange={(e) => e.target.value !== "" && props.onChange(Number(e.target.value))}
      />
    </label>
  );
}

function Choice<T extends string>(props: { label: string; value: T; options: readonly (readonly [T, string])[]; onChange(value: T): void }) {
  return (
    <label className="field">
      <span>{props.label}</span>
      <select aria-label={props.label} value={props.value} onChange={(e) => props.onChange(e.target.value as T)}>
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

function Toggle(props: { label: string; value: boolean; onChange(value: boolean): void }) {
  return (
    <label className="field toggle">
      <input aria-label={props.label} type="checkbox" checked={props.value} onChange={(e) => props.onChange(e.target.checked)} />
      <span>{props.label}</span>
    </label>
  );
}

function Group(props: { title: string; children: ReactNode }) {
  return (
    <fieldset className="group">
      <legend>{props.title}</legend>
      {props.children}
    </fieldset>
  );
}

/** Set up a run: environment, dataset, policy, sampling, rollout limits, structured tools and the penalty. */
export function SetupForm() {
  const setup = useLab((s) => s.form.setup);
  const detached = useLab((s) => s.form.detached);
  const { updateSetup: update, addFile } = useLab.getState().form;
  const set = <K extends keyof Setup>(key: K) => (value: Setup[K]) => update({ [key]: value } as Partial<Setup>);
  const userEnvironments = useUserEnvironments((s) => s.environments).filter((e) => e.status === "ready" && e.description);
  const chooseEnv = (env: EnvName) => {
    const user = userEnvironments.find((e) => e.description!.name === env);
    update({ env, ...(user ? { customTaskName: user.description!.defaultTaskName } : env === "http" ? { customTaskName: "" } : {}) });
  };
  const custom = !isBuiltinSetupEnv(setup.env);
  // What cannot work is said here, before Run (which refuses it); a scenario the fields do not write is not theirs.
  const problems = detached ? [] : setupProblems(setup);
  return (
    <div className="setup-form">
      {problems.length > 0 && (
        <ul className="error setup-problems" role="alert" data-testid="setup-problems">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      {detached && (
        <p className="hint" data-testid="form-detached">
          What runs is the Scenario JSON below, which these fields do not write (a scenario file, your edits, or a run
          shown that they cannot describe). Changing a field here replaces it with the scenario the fields write.
        </p>
      )}
      <Group title="Environment">
        <Choice<EnvName>
          label="Environment"
          value={setup.env}
          options={[
            ["sliding_puzzle", "Sliding puzzle"],
            ["calculator", "Multi-step calculator"],
            ["workspace", "Workspace (tools)"],
            ["http", "Remote environment (HTTP)"],
            ...userEnvironments.map((e) => [e.description!.name, `${e.description!.title} (your module)`] as const),
            // A scenario may name a module that is not loaded (yet): keep it selectable rather than lose it.
            ...(custom && setup.env !== "http" && !userEnvironments.some((e) => e.description!.name === setup.env)
              ? [[setup.env, `${setup.env} (not loaded)`] as const]
              : []),
          ]}
          onChange={chooseEnv}
        />
        {setup.env === "http" && (
          <RemoteEnvironmentFields
            url={setup.remoteUrl}
            onUrl={(remoteUrl) => update({ remoteUrl })}
            onConnected={(info) => update({ customTaskName: info.default_task_name ?? info.name })}
          />
        )}
        {custom && (
          <>
            <label className="field">
              <span>Task name</span>
              <input aria-label="Task name" value={setup.customTaskName} placeholder={setup.env} onChange={(e) => update({ customTaskName: e.target.value })} />
            </label>
            <label className="field wide">
              <span>Dataset config (JSON)</span>
              <textarea aria-label="Dataset config" rows={2} value={setup.customDatasetConfig} onChange={(e) => update({ customDatasetConfig: e.target.value })} />
            </label>
          </>
        )}
        {setup.env === "sliding_puzzle" && (
          <>
            <NumberField label="Board size (max)" value={setup.puzzle.size} min={2} onChange={(size) => update({ puzzle: { ...setup.puzzle, size } })} />
            <NumberField label="Shuffle moves (max)" value={setup.puzzle.shuffle_moves} min={1} onChange={(shuffle_moves) => update({ puzzle: { ...setup.puzzle, shuffle_moves } })} />
            <NumberField label="Max moves" value={setup.puzzle.max_moves} min={0} onChange={(max_moves) => update({ puzzle: { ...setup.puzzle, max_moves } })} />
          </>
        )}
        {setup.env === "calculator" && (
          <>
            <NumberField label="Steps" value={setup.calculator.steps} min={1} onChange={(steps) => update({ calculator: { ...setup.calculator, steps } })} />
            <NumberField label="Max operand" value={setup.calculator.max_operand} min={1} onChange={(max_operand) => update({ calculator: { ...setup.calculator, max_operand } })} />
          </>
        )}
        {setup.env === "workspace" && (
          <>
            <Toggle label="Structured tool calls" value={setup.workspace.structured_tools} onChange={(structured_tools) => update({ workspace: { ...setup.workspace, structured_tools } })} />
            <NumberField label="Env max turns" value={setup.workspace.max_turns} min={1} onChange={(max_turns) => update({ workspace: { ...setup.workspace, max_turns } })} />
          </>
        )}
        <NumberField label="Samples" value={setup.datasetSize} min={1} onChange={set("datasetSize")} />
        <NumberField label="Dataset seed" value={setup.datasetSeed} onChange={set("datasetSeed")} />
        <UserEnvironmentsPanel onLoaded={(env, customTaskName) => update({ env, customTaskName })} />
      </Group>
      <Group title="Policy">
        <Choice<PolicyKind>
          label="Policy"
          value={setup.policy}
          options={[
            ["model", "Language model"],
            ["oracle", "Oracle"],
            ["scripted", "Scripted"],
            ["replay", "Replay a saved run"],
            ["human", "Human (you type the turns)"],
          ]}
          onChange={set("policy")}
        />
        {setup.policy === "replay" && (
          <label className="field wide">
            <span>Run to replay (JSONL export or result JSON){setup.replayFile ? `: ${setup.replayFile}` : ""}</span>
            <input
              aria-label="Run to replay"
              type="file"
              accept=".jsonl,.json"
              onChange={async (e) => {
                const file = e.target.files?.[0];
                if (!file) return;
                addFile(file.name, await file.text());
                update({ replayFile: file.name });
              }}
            />
          </label>
        )}
        {setup.policy === "human" && <p className="hint wide-hint">Each turn waits for your reply; the finished run is saved as a scripted scenario.</p>}
        {setup.policy === "model" && (
          <>
            <Choice
              label="Built-in or hub model"
              value={BUILTIN_MODEL_CHOICES.some(([id]) => id === setup.model) ? setup.model : "other"}
              options={[...BUILTIN_MODEL_CHOICES, ["other", "hub id or local folder…"]]}
              onChange={(v) => v !== "other" && update({ model: v })}
            />
            <Toggle label="Greedy" value={setup.greedy} onChange={set("greedy")} />
            {!setup.greedy && (
              <>
                <NumberField label="Temperature" value={setup.temperature} step={0.1} min={0} onChange={set("temperature")} />
                <NumberField label="Top-k" value={setup.top_k} min={0} onChange={set("top_k")} />
                <NumberField label="Top-p" value={setup.top_p} step={0.05} min={0} onChange={set("top_p")} />
                <NumberField label="Sampling seed" value={setup.samplingSeed} onChange={set("samplingSeed")} />
              </>
            )}
            <NumberField label="Max new tokens" value={setup.maxNewTokens} min={1} onChange={set("maxNewTokens")} />
          </>
        )}
        {setup.policy === "oracle" && (
          <>
            <NumberField label="Oracle seed" value={setup.oracleSeed} onChange={set("oracleSeed")} />
            <NumberField label="Error rate" value={setup.errorRate} step={0.05} min={0} onChange={set("errorRate")} />
          </>
        )}
        {setup.policy !== "model" && (
          <>
            <Choice
              label="Tokenizer"
              value={setup.tokenizer === "" || setup.tokenizer === "builtin:tiny-qwen3" ? setup.tokenizer : "other"}
              options={[
                ["", "byte-level (built-in ChatML)"],
                ["builtin:tiny-qwen3", "Qwen3 (its tokenizer and chat template)"],
                ...(setup.tokenizer !== "" && setup.tokenizer !== "builtin:tiny-qwen3" ? ([["other", setup.tokenizer]] as const) : []),
              ]}
              onChange={(v) => v !== "other" && update({ tokenizer: v })}
            />
            <p className="hint wide-hint">
              The text policy's tokens and the prompts' chat template: with Qwen3's, the prompts are rendered by its template and every
              token id is Qwen3's.
            </p>
          </>
        )}
        {setup.policy === "scripted" && (
          <label className="field wide">
            <span>Responses (one list per sample)</span>
            <textarea aria-label="Scripted responses" value={setup.scripted} onChange={(e) => update({ scripted: e.target.value })} />
          </label>
        )}
      </Group>
      <Group title="Rollout">
        <Choice
          label="Mode"
          value={setup.mode}
          options={[
            ["sync", "sync (lock-step batch)"],
            ["async", "async (per sample)"],
          ]}
          onChange={set("mode")}
        />
        <NumberField label="max_seq_len" value={setup.maxSeqLen} min={1} onChange={set("maxSeqLen")} />
        <NumberField label="max_rollout_turns" value={setup.maxRolloutTurns} min={1} onChange={set("maxRolloutTurns")} />
        <NumberField label="Environment step timeout (ms, 0: none)" value={setup.envStepTimeoutMs} min={0} step={100} onChange={set("envStepTimeoutMs")} />
        <Toggle label="Structured tool use" value={setup.structured} onChange={set("structured")} />
        {setup.structured && (
          <>
            <Choice label="Thinking style" value={setup.thinkingStyle} options={[["paired", "paired"], ["closing_only", "closing_only"]]} onChange={set("thinkingStyle")} />
            <Choice label="Envelope" value={setup.envelope} options={[["fork", "fork (derived library's)"], ["template", "template (chat template's)"]]} onChange={set("envelope")} />
          </>
        )}
        <Toggle label="Invalid-action penalty" value={setup.invalidAction} onChange={set("invalidAction")} />
        {setup.invalidAction && (
          <>
            <NumberField label="Invalid-action penalty value" value={setup.invalidActionPenalty} step={0.05} onChange={set("invalidActionPenalty")} />
            <NumberField label="Malformed-thinking penalty value" value={setup.malformedThinkingPenalty} step={0.05} onChange={set("malformedThinkingPenalty")} />
          </>
        )}
      </Group>
    </div>
  );
}
