/**
 * A stand-in for the Hugging Face hub in tests: serves folders' files at the hub's documented download path,
 * `/{org}/{name}/resolve/{revision}/{file}`, on 127.0.0.1 (404 for anything else). No test reaches the real hub.
 */

import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface StandInHub {
  /** The host to give as `remoteHost` / `HF_ENDPOINT`, with its trailing slash. */
  url: string;
  /** The paths asked for, in order. */
  requests: string[];
  /** A cache folder of its own (transformers.js keys its cache by id, not host), removed on close. */
  cacheDir: string;
  close(): Promise<void>;
}

/** Serves each `repos[id]` folder as the hub repository `id` (`org/name`). */
export async function startStandInHub(repos: Record<string, string>): Promise<StandInHub> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url!, "http://x").pathname);
    requests.push(path);
    const match = /^\/([^/]+\/[^/]+)\/resolve\/[^/]+\/(.+)$/.exec(path);
    const folder = match ? repos[match[1]!] : undefined;
    const file = folder && !match![2]!.includes("..") ? join(folder, match![2]!) : "";
    if (!file || !existsSync(file) || !statSync(file).isFile()) return void res.writeHead(404).end();
    res.writeHead(200, { "Content-Length": statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const cacheDir = mkdtempSync(join(tmpdir(), "stand-in-hub-cache-"));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests,
    cacheDir,
    close: async () => {
      await new Promise<void>((done) => server.close(() => done()));
      rmSync(cacheDir, { recursive: true, force: true });
    },
  };
}
