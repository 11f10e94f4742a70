/**
 * Where tests run WebGPU in Node (through Dawn): the machine's own Vulkan driver when `VK_ICD_FILENAMES` names one,
 * else Chromium's SwiftShader driver, the software adapter the e2e WebGPU tests use too (CI installs Chromium).
 */

import { existsSync } from "node:fs";
import { tmpdir } from "node:os";

export const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";

/** The environment Dawn needs for a Vulkan driver; null when there is none (the tests then skip, saying why). */
export function vulkanEnv(): Record<string, string> | null {
  const runtimeDir = { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? tmpdir() };
  if (process.env.VK_ICD_FILENAMES) return runtimeDir;
  return existsSync(SWIFTSHADER_ICD) ? { VK_ICD_FILENAMES: SWIFTSHADER_ICD, ...runtimeDir } : null;
}
