import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, normalize } from "node:path";

/**
 * A stand-in for the Hugging Face hub on localhost, speaking its file API (`/{id}/resolve/main/{file}`, with CORS):
 * the files of `folder` as the hub model `id`, 404 for anything else. `requested` lists every path asked for.
 */
export async function startStandInHub(id: string, folder: string): Promise<{ server: Server; origin: string; requested: string[] }> {
  const requested: string[] = [];
  const prefix = `/${id}/resolve/main/`;
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url!, "http://x").pathname);
    requested.push(path);
    const file = path.startsWith(prefix) ? normalize(join(folder, path.slice(prefix.length))) : "";
    const headers = { "Access-Control-Allow-Origin": "*", "Cross-Origin-Resource-Policy": "cross-origin" };
    if (req.method === "OPTIONS") return res.writeHead(204, { ...headers, "Access-Control-Allow-Headers": "*" }).end();
    if (!file || !file.startsWith(folder) || !existsSync(file) || !statSync(file).isFile()) return res.writeHead(404, headers).end("not found");
    res.writeHead(200, { ...headers, "Content-Length": statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requested };
}
