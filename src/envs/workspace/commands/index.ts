/** Every built-in command of the workspace shell, by name. */

import type { Command } from "./common.js";
import { FILE_COMMANDS } from "./files.js";
import { TEXT_COMMANDS } from "./text.js";

export const BUILTIN_COMMANDS: Readonly<Record<string, Command>> = { ...FILE_COMMANDS, ...TEXT_COMMANDS };

export type { Command, CommandIO, CommandResult } from "./common.js";
