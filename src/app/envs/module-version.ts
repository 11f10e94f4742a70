/**
 * Which version of a module the lab runs. Each load of a module from the same origin (a file name, a URL, a path
 * of this checkout) is its next version: `v3`, when it was loaded, and a fingerprint of its text (the first 8 hex
 * digits of its SHA-256), so whoever fixed a file and loaded it again sees whether the lab got the new text
 * ("changed") or the old one again ("same source as v2").
 */

export interface ModuleVersion {
  /** 1 for the first load of an origin, then one more per load (a kept copy's number goes on after a reload). */
  number: number;
  /** When it was loaded (ms since the epoch). */
  loadedAt: number;
  /** The first 8 hex digits of the SHA-256 of the module's text (UTF-8). */
  fingerprint: string;
  /** The load this one follows, of the same origin; null for the first. */
  previous: { number: number; fingerprint: string } | null;
}

export type VersionChange = "first" | "changed" | "same";

/** The version after `previous` (null: none) of a text whose fingerprint is `fingerprint`, loaded at `loadedAt`. */
export function nextVersion(previous: Pick<ModuleVersion, "number" | "fingerprint"> | null, fingerprint: string, loadedAt: number): ModuleVersion {
  return {
    number: (previous?.number ?? 0) + 1,
    loadedAt,
    fingerprint,
    previous: previous ? { number: previous.number, fingerprint: previous.fingerprint } : null,
  };
}

/** Against the load before it: the first, a changed text, or the same text again. */
export function changeOf(version: ModuleVersion): VersionChange {
  if (!version.previous) return "first";
  return version.previous.fingerprint === version.fingerprint ? "same" : "changed";
}

/** `10:42:07` for a time of today, `2025-03-02 10:42:07` for one of another day (local time). */
export function formatLoadTime(at: number, now = Date.now()): string {
  const d = new Date(at);
  const pad = (n: number) => String(n).padStart(2, "0");
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const today = new Date(now);
  const sameDay = d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate();
  return sameDay ? time : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

/** The parts the panel shows: `v3`, `loaded 10:42:07`, `a1b2c3d4`, `(changed)` / `(same source as v2)` / `` (a first load). */
export function versionParts(version: ModuleVersion, now = Date.now()): { number: string; time: string; fingerprint: string; change: string } {
  const change = changeOf(version);
  return {
    number: `v${version.number}`,
    time: `loaded ${formatLoadTime(version.loadedAt, now)}`,
    fingerprint: version.fingerprint,
    change: change === "changed" ? "(changed)" : change === "same" ? `(same source as v${version.previous!.number})` : "",
  };
}

/** `v3 · loaded 10:42:07 · a1b2c3d4 (changed)`. */
export function describeVersion(version: ModuleVersion, now = Date.now()): string {
  const p = versionParts(version, now);
  return `${p.number} · ${p.time} · ${p.fingerprint}${p.change ? ` ${p.change}` : ""}`;
}

/**
 * The fingerprint of a module's text: the first 8 hex digits of its SHA-256. `crypto.subtle` exists only in a
 * secure context (https, localhost); a lab served over plain http on another address computes the same digest in
 * JavaScript, so fingerprints agree wherever the lab is served.
 */
export async function fingerprint(text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const subtle = globalThis.crypto?.subtle;
  if (subtle) {
    try {
      return hex(new Uint8Array(await subtle.digest("SHA-256", bytes))).slice(0, 8);
    } catch {
      // A browser that refuses the digest: the JavaScript one gives the same value.
    }
  }
  return hex(sha256(bytes)).slice(0, 8);
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** The first 32 bits of the fractional parts of the square (`root` 2) or cube (3) roots of the first primes. */
function primeRoots(count: number, root: number): Uint32Array {
  const out = new Uint32Array(count);
  for (let n = 2, found = 0; found < count; n++) {
    let prime = true;
    for (let d = 2; d * d <= n; d++) if (n % d === 0) prime = false;
    if (!prime) continue;
    const r = n ** (1 / root);
    out[found++] = ((r - Math.floor(r)) * 2 ** 32) >>> 0;
  }
  return out;
}

let constants: { k: Uint32Array; h: Uint32Array } | null = null;

/** SHA-256 (FIPS 180-4) of `bytes`: the fallback where `crypto.subtle` is missing. */
export function sha256(bytes: Uint8Array): Uint8Array {
  constants ??= { k: primeRoots(64, 3), h: primeRoots(8, 2) };
  const { k } = constants;
  const h = constants.h.slice();
  // The message, a 1 bit, zeros, and its length in bits (64-bit big-endian), to a multiple of 64 bytes.
  const length = Math.ceil((bytes.length + 9) / 64) * 64;
  const padded = new Uint8Array(length);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(length - 8, Math.floor((bytes.length * 8) / 2 ** 32));
  view.setUint32(length - 4, (bytes.length * 8) >>> 0);
  const w = new Uint32Array(64);
  const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15]!, 7) ^ rotr(w[i - 15]!, 18) ^ (w[i - 15]! >>> 3);
      const s1 = rotr(w[i - 2]!, 17) ^ rotr(w[i - 2]!, 19) ^ (w[i - 2]! >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = Array.from(h) as [number, number, number, number, number, number, number, number];
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i]! + w[i]!) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    [a, b, c, d, e, f, g, hh].forEach((x, i) => (h[i] = (h[i]! + x) >>> 0));
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  h.forEach((x, i) => outView.setUint32(i * 4, x));
  return out;
}
