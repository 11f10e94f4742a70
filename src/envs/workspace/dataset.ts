/**
 * The workspace's seeded dataset. Datum i gets task kind `tasks[i % tasks.length]` (so a small dataset still
 * covers every kind) and its contents from a generator derived from (seed, i), so a datum does not depend on the
 * dataset's size. The prompt is the chat template's render of a system and a user turn, with SESSION_TOOLS
 * advertised in the system turn (fork-additions.md §3.4), or no tools and fenced-bash instructions in legacy mode.
 */

import { renderChatTemplate, Rng, SESSION_TOOLS } from "../../core/index.js";
import { booleanSetting, checkConfigKeys, integerSetting } from "../config.js";
import type { DatasetDatum, DatasetRequest, GeneratedDatum, RawPromptDatum } from "../types.js";
import { VirtualFs } from "./fs.js";
import type { WorkspaceMetadata } from "./env.js";
import { generateTask, TASK_KINDS, type GeneratedTask, type TaskKind, type WorkspaceTask } from "./tasks.js";

export const WORKSPACE_SYSTEM_PROMPT = "You are a helpful assistant.";
/** Opens every workspace instruction; the oracle recognises its environment by it. */
export const WORKSPACE_PREAMBLE =
  "You are working in a virtual workspace at /workspace (the current directory): a small file tree with a basic " +
  "shell (ls, cat, grep, find, wc, head, tail, sort, uniq, echo, printf, mkdir, touch, cp, mv, rm, cd).";

export interface WorkspaceDatasetConfig {
  tasks: TaskKind[];
  /** A per-sample turn budget written into the metadata; null leaves it to the environment's `max_turns`. */
  max_turns: number | null;
  /** Advertise the tools (true) or ask for ```bash blocks and TASK_COMPLETE (false); match the environment's. */
  structured_tools: boolean;
}

export function workspaceDatasetConfig(config: Record<string, unknown>): WorkspaceDatasetConfig {
  const where = "workspace dataset.config";
  checkConfigKeys(where, config, ["tasks", "max_turns", "structured_tools"]);
  const tasks = config.tasks === undefined ? [...TASK_KINDS] : config.tasks;
  if (!Array.isArray(tasks) || !tasks.length || !tasks.every((t) => (TASK_KINDS as readonly unknown[]).includes(t))) {
    throw new Error(`${where}.tasks: expected a non-empty list of: ${TASK_KINDS.join(", ")}`);
  }
  return {
    tasks: tasks as TaskKind[],
    max_turns: integerSetting(where, config, "max_turns", null, 1),
    structured_tools: booleanSetting(where, config, "structured_tools", true),
  };
}

export function workspaceUserText(task: WorkspaceTask, structured: boolean): string {
  const how = structured
    ? "Use the tools, one call per reply; each call's output comes back in the next message. Call task_complete " +
      "when the task is done."
    : "Run one shell command per reply, in a ```bash code block; its output comes back in the next message. When " +
      "the task is done, reply with TASK_COMPLETE on a line of its own.";
  return `${WORKSPACE_PREAMBLE}\n\nTask: ${task.instruction}\n\n${how}`;
}

export function workspacePrompt(task: WorkspaceTask, structured: boolean): string {
  return renderChatTemplate(
    [
      { role: "system", content: WORKSPACE_SYSTEM_PROMPT },
      { role: "user", content: workspaceUserText(task, structured) },
    ],
    { tools: structured ? SESSION_TOOLS.chatTemplateTools() : null, addGenerationPrompt: true },
  );
}

export function workspaceDatum(generated: GeneratedTask, config: WorkspaceDatasetConfig, taskName: string): DatasetDatum {
  const metadata: WorkspaceMetadata = {
    task: generated.task,
    fs: VirtualFs.withFiles(generated.files).toJSON(),
    turn: 0,
    ...(config.max_turns !== null ? { max_turns: config.max_turns } : {}),
  };
  return {
    message_log: [{ role: "user", content: workspacePrompt(generated.task, config.structured_tools) }],
    extra_env_info: metadata,
    stop_strings: null,
    task_name: taskName,
  };
}

/**
 * The datum with its prompt as raw chat messages (`DatasetRequest.prompts: "messages"`): the system and user
 * texts, and the session tools as `tools` when the tools are structured.
 */
export function rawWorkspaceDatum(datum: DatasetDatum, structuredTools: boolean): RawPromptDatum {
  const { message_log: _rendered, ...rest } = datum;
  const task = (datum.extra_env_info as unknown as WorkspaceMetadata).task;
  return {
    ...rest,
    messages: [
      { role: "system", content: WORKSPACE_SYSTEM_PROMPT },
      { role: "user", content: workspaceUserText(task, structuredTools) },
    ],
    ...(structuredTools ? { tools: SESSION_TOOLS.chatTemplateTools() as unknown as Record<string, unknown>[] } : {}),
  };
}

/** The dataset; asked for raw prompts, each datum's prompt as chat messages for the active template. */
export function workspaceDataset(request: DatasetRequest): GeneratedDatum[] {
  const data = generateWorkspaceDataset(request);
  if (request.prompts !== "messages") return data;
  const structured = workspaceDatasetConfig(request.config).structured_tools;
  return data.map((d) => rawWorkspaceDatum(d, structured));
}

export function generateWorkspaceDataset(request: DatasetRequest): DatasetDatum[] {
  const config = workspaceDatasetConfig(request.config);
  return Array.from({ length: request.size }, (_, i) => {
    const kind = config.tasks[i % config.tasks.length]!;
    return workspaceDatum(generateTask(kind, Rng.derive(request.seed, "workspace", i)), config, request.taskName);
  });
}
