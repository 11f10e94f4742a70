/**
 * The workspace environment as the lab plugs it in: the derived library's multi-turn session environment with
 * its structured Hermes tools (SESSION_TOOLS), over an in-memory file tree and a small built-in shell.
 */

import type { BuiltinEnvironmentDefinition } from "../types.js";
import { workspaceDataset } from "./dataset.js";
import { WorkspaceEnv, workspaceEnvConfig } from "./env.js";
import { workspaceView } from "./view.js";

export { WorkspaceEnv, WORKSPACE_ENV_DEFAULTS, processWorkspaceTurn, verdictText, workspaceEnvConfig } from "./env.js";
export type { WorkspaceEnvConfig, WorkspaceMetadata, WorkspaceTurn } from "./env.js";
export {
  generateWorkspaceDataset,
  rawWorkspaceDatum,
  workspaceDataset,
  workspaceDatasetConfig,
  workspaceDatum,
  workspacePrompt,
  workspaceUserText,
  WORKSPACE_PREAMBLE,
  WORKSPACE_SYSTEM_PROMPT,
} from "./dataset.js";
export type { WorkspaceDatasetConfig } from "./dataset.js";
export { FsError, normalizePath, VirtualFs, WORKSPACE_ROOT } from "./fs.js";
export type { FsState } from "./fs.js";
export { DEFAULT_OUTPUT_LIMIT, formatObservation, runShell, TRUNCATION_MARK } from "./shell.js";
export type { ShellResult } from "./shell.js";
export { CONFIG_FILE_NAMES, generateTask, gradeTask, LOG_FILE_NAMES, TASK_KINDS } from "./tasks.js";
export type { GeneratedTask, Grade, TaskKind, WorkspaceTask } from "./tasks.js";
export {
  buildReadFileCommand,
  buildWriteFileCommand,
  LEGACY_NUDGE,
  parseLegacyAction,
  parseStructuredAction,
  shellQuote,
  STRUCTURED_NUDGE,
} from "./tools.js";
export type { LegacyAction, StructuredAction } from "./tools.js";
export { workspaceView } from "./view.js";

export const workspaceEnvironment: BuiltinEnvironmentDefinition = {
  name: "workspace",
  defaultTaskName: "workspace",
  title: "Workspace (structured tool use)",
  description:
    "The derived library's multi-turn session environment over a virtual file tree: the model calls run_shell, " +
    "read_file, write_file and task_complete as Hermes <tool_call>s (or, with structured_tools: false, answers " +
    "with ```bash blocks and TASK_COMPLETE); reward 1.0 when the graded task is solved.",
  create(config) {
    return new WorkspaceEnv(workspaceEnvConfig(config));
  },
  generateDataset: workspaceDataset as BuiltinEnvironmentDefinition["generateDataset"],
  view: workspaceView,
};
