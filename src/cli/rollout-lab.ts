/**
 * `rollout-lab <command> [args]`: the Node commands in one program, as the package's `bin` installs it (the
 * checkout's `npm run <command>` scripts run the same modules). Each command is loaded only when asked for.
 */

import { isEntryPoint } from "./entry.js";

const COMMANDS = {
  rollout: { about: "run one scenario headless; the result JSON", load: () => import("./rollout.js") },
  import: { about: "convert rollout dumps of other RL libraries (NeMo RL, NeMo Gym, verl, verifiers, SkyRL) to the lab's JSONL export", load: () => import("./import.js") },
  regress: { about: "run a suite against its goldens (or merge shard reports)", load: () => import("./regress.js") },
  conformance: { about: "run the reference's conformance cases", load: () => import("./conformance.js") },
  "build-model": { about: "write the built-in models and onnxruntime-web's wasm files", load: () => import("./build-model.js") },
} as const;

type CommandName = keyof typeof COMMANDS;

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.about}`);
  return ["usage: rollout-lab <command> [args]   (rollout-lab <command> --help for its own)", "", "commands:", ...lines, ""].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    process.stderr.write(`error: unknown command '${name}'\n${usage()}`);
    return 2;
  }
  const command: { main(argv: string[]): number | Promise<number>; command?(argv: string[]): Promise<number> } = await COMMANDS[name as CommandName].load();
  // A command's own wrapper where it has one (regress: an unexpected error exits 2, never 1, a regression's status).
  return command.command ? command.command(rest) : command.main(rest);
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
