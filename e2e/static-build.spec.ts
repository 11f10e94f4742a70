import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, resolve } from "node:path";
import { expect, test } from "./fixtures.js";

const dist = resolve("dist");
const TYPES: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".onnx": "application/octet-stream",
  ".map": "application/json",
};

/** The plainest static host: files from dist/, 404 for anything else, no special headers (no COOP/COEP). */
async function plainStaticServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url!, "http://x").pathname);
    if (path.endsWith("/")) path += "index.html";
    const file = normalize(join(dist, path));
    if (!file.startsWith(dist) || !existsSync(file) || !statSync(file).isFile()) return res.writeHead(404).end("not found");
    res.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream", "Content-Length": statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test("the built site runs the default rollout from a plain static server (404 for missing files, no COOP/COEP)", async ({ page, guard }) => {
  const { server, origin } = await plainStaticServer();
  try {
    guard.allow(origin);
    await page.goto(`${origin}/`);
    await page.getByRole("button", { name: "Run" }).click();
    await expect(page.getByTestId("run-status")).toHaveText("finished", { timeout: 30_000 });
    await expect(page.getByTestId("model-status")).toContainText("ready on WASM");
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(false);
  } finally {
    server.close();
  }
});
