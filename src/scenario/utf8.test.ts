import { describe, expect, it } from "vitest";
import { decodeUtf8, invalidUtf8Offset, StrictUtf8Decoder, Utf8Error } from "./utf8.js";

const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const decodes = (bytes: Uint8Array) => {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
};

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mostly valid text with some bytes of the awkward ranges mixed in. */
function randomBytes(next: () => number, n: number): Uint8Array {
  const text = Array.from({ length: n }, () => {
    const r = next();
    return r < 0.6 ? String.fromCharCode(0x20 + Math.floor(next() * 90)) : r < 0.8 ? "é€\n" : "😀";
  }).join("");
  const bytes = new TextEncoder().encode(text);
  const awkward = [0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xa0, 0x9f, 0x8f, 0x90];
  for (let k = 0; k < bytes.length; k++) if (next() < 0.03) bytes[k] = awkward[Math.floor(next() * awkward.length)]!;
  return bytes;
}

describe("invalidUtf8Offset", () => {
  it("agrees with a fatal TextDecoder: -1 exactly when it decodes, and everything before the offset decodes", () => {
    const next = rng(7);
    for (let round = 0; round < 3000; round++) {
      const bytes = randomBytes(next, 1 + Math.floor(next() * 12));
      const offset = invalidUtf8Offset(bytes);
      expect(offset === -1, `bytes ${[...bytes].map((b) => b.toString(16))}`).toBe(decodes(bytes));
      if (offset >= 0) {
        expect(decodes(bytes.subarray(0, offset))).toBe(true);
        // The sequence at the offset is what fails: one character more does not decode.
        for (let len = 1; len <= 4 && offset + len <= bytes.length; len++) expect(decodes(bytes.subarray(0, offset + len))).toBe(false);
      }
    }
  });

  it("the classic cases", () => {
    const at = (...b: number[]) => invalidUtf8Offset(Uint8Array.from(b));
    expect(at(0x61, 0x80)).toBe(1); // a stray continuation byte
    expect(at(0xc0, 0xaf)).toBe(0); // overlong
    expect(at(0xed, 0xa0, 0x80)).toBe(0); // a surrogate
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0); // above U+10FFFF
    expect(at(0x61, 0xe2, 0x82)).toBe(1); // cut short
    expect(at(0xe2, 0x82, 0xac)).toBe(-1); // €
  });
});

describe("decodeUtf8", () => {
  it("names the byte and line of bytes that are not UTF-8; drops a byte-order mark", () => {
    const bytes = new TextEncoder().encode('{\n  "a": "é",\n  "b": "xx"\n}');
    bytes[bytes.indexOf(0x78)] = 0xff; // the first x of line 3
    expect(() => decodeUtf8(bytes)).toThrow(Utf8Error);
    expect(() => decodeUtf8(bytes)).toThrow(`not valid UTF-8 at byte ${bytes.indexOf(0xff)} (line 3): the file must be UTF-8 text`);
    expect(decodeUtf8(Uint8Array.from([0xef, 0xbb, 0xbf, 0x61]))).toBe("a");
  });
});

describe("StrictUtf8Decoder", () => {
  function run(bytes: Uint8Array, cuts: number[]) {
    let text = "";
    const invalid: number[] = [];
    const d = new StrictUtf8Decoder(
      (t) => (text += t),
      (o) => invalid.push(o),
    );
    let start = 0;
    for (const cut of [...cuts, bytes.length]) {
      d.decode(bytes.subarray(start, cut));
      start = cut;
    }
    d.end();
    return { text, invalid };
  }

  it("valid text cut anywhere into chunks reads as the whole", () => {
    const next = rng(3);
    const bytes = new TextEncoder().encode("\ufeffé😀 line\nnext € line\n".repeat(20));
    const whole = new TextDecoder().decode(bytes);
    for (let round = 0; round < 300; round++) {
      const cuts = [...new Set(Array.from({ length: 1 + Math.floor(next() * 8) }, () => Math.floor(next() * bytes.length)))].sort((a, b) => a - b);
      expect(run(bytes, cuts)).toEqual({ text: whole, invalid: [] });
    }
  });

  it("reports the stream offset of the first bad byte of each line and skips to the line's end", () => {
    const bytes = new TextEncoder().encode("good line\nbad xx line\nok\nalso bad x\n");
    const first = bytes.indexOf(0x78);
    bytes[first] = 0xff;
    bytes[first + 1] = 0xfe; // the same line: reported once
    const second = bytes.lastIndexOf(0x78);
    bytes[second] = 0xc3; // a lead byte followed by a newline
    for (const cuts of [[], [first], [first + 1], [second], [second + 1], [1, 2, 3, first, second]]) {
      const { text, invalid } = run(bytes, cuts);
      expect(invalid).toEqual([first, second]);
      expect(text.split("\n")).toEqual(["good line", "bad \ufffd", "ok", "also bad \ufffd", ""]);
    }
  });

  it("a stream that ends inside a character", () => {
    const bytes = Uint8Array.from([0x61, 0x0a, 0xe2, 0x82]);
    expect(run(bytes, [3])).toEqual({ text: "a\n\ufffd", invalid: [2] });
    expect(run(Uint8Array.from([0xef, 0xbb]), [])).toEqual({ text: "\ufffd", invalid: [0] });
  });
});
