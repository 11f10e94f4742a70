#!/usr/bin/env node
// The package's command: the TypeScript sources run through tsx's loader (no build step at install).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/rollout-lab.ts");
process.exitCode = await main(process.argv.slice(2));
