import { cpSync, createReadStream, existsSync, mkdtempSync, rmSync, statSync, truncateSync, writeFileSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, normalize, resolve } from "node:path";

/**
 * A stand-in hub on localhost that serves copies of the built-in tiny model, each with one file broken: the model
 * `stand-in/<variant>` is the copy the variant's `breakIt` changed (a file truncated, garbled, rewritten or
 * removed). Anything else answers 404.
 */
export interface FaultyHub {
  origin: string;
  requested: string[];
  close(): void;
}

export type Breakage = (folder: string) => void;

export const BREAKAGES = {
  /** The ONNX graph cut to a third of its bytes (a download that stopped early). */
  "truncated-onnx": (dir: string) => truncateSync(join(dir, "onnx/model.onnx"), Math.floor(statSync(join(dir, "onnx/model.onnx")).size / 3)),
  /** config.json that is not JSON. */
  "garbled-config": (dir: string) => writeFileSync(join(dir, "config.json"), '{"model_type": "llama", "hidden_size": 64,, oops'),
  /** config.json whose model type transformers.js does not know. */
  "model-type": (dir: string) => {
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    writeFileSync(join(dir, "config.json"), JSON.stringify({ ...config, model_type: "nonsense_model", architectures: ["NonsenseForCausalLM"] }));
  },
  /** tokenizer.json cut short (not JSON any more). */
  "garbled-tokenizer": (dir: string) => truncateSync(join(dir, "tokenizer.json"), 3000),
  /** the ONNX graph removed. */
  "missing-onnx": (dir: string) => rmSync(join(dir, "onnx/model.onnx")),
} satisfies Record<string, Breakage>;

export async function startFaultyHub(): Promise<FaultyHub> {
  const root = mkdtempSync(join(tmpdir(), "faulty-hub-"));
  const tiny = resolve("public/models/builtin/tiny");
  for (const [name, breakIt] of Object.entries(BREAKAGES)) {
    cpSync(tiny, join(root, name), { recursive: true });
    breakIt(join(root, name));
  }
  cpSync(tiny, join(root, "healthy"), { recursive: true });
  const requested: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url!, "http://x").pathname);
    requested.push(path);
    const match = /^\/stand-in\/([\w-]+)\/resolve\/main\/(.+)$/.exec(path);
    const file = match ? normalize(join(root, match[1]!, match[2]!)) : "";
    const headers = { "Access-Control-Allow-Origin": "*", "Cross-Origin-Resource-Policy": "cross-origin" };
    if (req.method === "OPTIONS") return res.writeHead(204, { ...headers, "Access-Control-Allow-Headers": "*" }).end();
    if (!match || !file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) return res.writeHead(404, headers).end("not found");
    res.writeHead(200, { ...headers, "Content-Length": statSync(file).size });
    if (req.method === "HEAD") return res.end();
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requested,
    close: () => {
      server.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
