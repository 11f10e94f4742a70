/** The workspace as the UI draws it: every file with its contents, and a caption with the task and the turn. */

import type { Metadata } from "../../core/index.js";
import type { EnvView } from "../types.js";
import type { WorkspaceMetadata } from "./env.js";

const TITLE = "Workspace";

export function workspaceView(metadata: Metadata): EnvView {
  const meta = metadata as Partial<WorkspaceMetadata> | null;
  const files = meta?.fs?.files;
  if (!meta || !files || typeof files !== "object" || !meta.task) {
    return { kind: "files", title: TITLE, files: [], caption: "No workspace state (the episode has ended)." };
  }
  const turn = typeof meta.turn === "number" ? meta.turn : 0;
  const budget = typeof meta.max_turns === "number" ? ` of ${meta.max_turns}` : "";
  const where = meta.fs?.cwd && meta.fs.cwd !== "/workspace" ? ` · cwd ${meta.fs.cwd}` : "";
  const status = meta.verdict ? ` · ${meta.verdict}` : "";
  return {
    kind: "files",
    title: TITLE,
    files: Object.keys(files)
      .sort()
      .map((path) => ({ path, content: String(files[path]) })),
    caption: `Task (${meta.task.kind}): ${meta.task.instruction} · turns taken: ${turn}${budget}${where}${status}`,
  };
}
