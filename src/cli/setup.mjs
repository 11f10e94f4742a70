// Shared by `npm start` and `npm test` (plain Node, no dependencies: it runs before `npm ci`).
// Installs what a fresh machine lacks: the npm packages, for the browser tests Debian's Chromium, and for the
// training pipeline's tests Debian's PyTorch.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: "inherit", cwd: root, ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

export function mustRun(command, args, options = {}) {
  const status = run(command, args, options);
  if (status !== 0) {
    console.error(`\n✗ ${command} ${args.join(" ")} exited with ${status}`);
    process.exit(status);
  }
}

/** `npm ci` when node_modules is missing or older than the lock file. */
export function ensureDependencies() {
  const marker = join(root, "node_modules", ".package-lock.json");
  const lock = join(root, "package-lock.json");
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  console.log("Installing npm packages (npm ci)…");
  mustRun("npm", ["ci", "--no-audit", "--no-fund"], { env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip" } });
}

/** Whether this process may install Debian packages: root, with apt-get on the PATH. */
function canApt() {
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!isRoot) return false;
  try {
    execFileSync("sh", ["-c", "command -v apt-get"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The Debian packages the training pipeline runs on (docs/training.md): PyTorch, the threaded BLAS, jemalloc. */
export const TRAINING_PACKAGES = ["python3-torch", "libopenblas0-pthread", "libjemalloc2"];

/**
 * A python3 that can import torch, for the training pipeline's tests: $PYTHON, python3 or /usr/bin/python3; where
 * none can and apt-get is there for root, Debian's PyTorch is installed (about 4 minutes). Null: none (the tests are
 * then skipped, and said to be).
 */
export function ensureTorchPython() {
  const find = () => [process.env.PYTHON, "python3", "/usr/bin/python3"].find((py) => py && spawnSync(py, ["-c", "import torch"]).status === 0) ?? null;
  const found = find();
  if (found || !canApt() || !existsSync("/usr/bin/python3")) return found;
  console.log(`Installing Debian's PyTorch for the training pipeline's tests (${TRAINING_PACKAGES.join(" ")})…`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  if (run("apt-get", ["update", "-qq"]) !== 0 || run("apt-get", ["install", "-y", "-qq", ...TRAINING_PACKAGES], { env }) !== 0) {
    console.error("apt-get could not install PyTorch: the training pipeline's tests are skipped");
    return null;
  }
  return find();
}

/** The Chromium that Playwright drives: CHROMIUM_PATH, else Debian's /usr/bin/chromium (installed when missing). */
export function ensureChromium() {
  const wanted = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
  if (existsSync(wanted)) return wanted;
  if (process.env.CHROMIUM_PATH) {
    console.error(`CHROMIUM_PATH=${wanted} does not exist.`);
    process.exit(1);
  }
  if (!canApt()) {
    console.error(
      "No Chromium at /usr/bin/chromium. Install Chromium (Debian: apt-get install chromium) or set CHROMIUM_PATH to a Chromium/Chrome binary.",
    );
    process.exit(1);
  }
  console.log("Installing Debian's chromium for the browser tests…");
  mustRun("apt-get", ["update", "-qq"]);
  mustRun("apt-get", ["install", "-y", "-qq", "chromium"], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return wanted;
}
