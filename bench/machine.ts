/** A one-line description of the machine a benchmark ran on, for its results file. */

import { cpus, totalmem } from "node:os";

export function machine(gpu?: string): string {
  const cores = cpus();
  const model = cores[0]?.model.replace(/\s+/g, " ").trim() ?? "unknown CPU";
  return `${cores.length}-core ${model}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${gpu ? `GPU: ${gpu}` : "no GPU used"}, Node ${process.version}`;
}

/** Collects garbage between runs when Node was started with --expose-gc (the bench scripts are). */
export const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.();
