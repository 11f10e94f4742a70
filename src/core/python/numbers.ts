/**
 * Python's number rules where the environments depend on them (literals.md, "Numbers follow Python").
 * JavaScript's Number()/parseFloat()/parseInt()/toFixed() each disagree with Python on some input.
 */

import { pyStripNumber } from "./text.js";

const DIGITS = "\\d(?:_?\\d)*";
const FLOAT_RE = new RegExp(
  `^[+-]?(?:(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf(?:inity)?|nan)$`,
  "i",
);
const INT_RE = new RegExp(`^[+-]?${DIGITS}$`);

/** Python `float(text)`, or `null` where Python raises ValueError. */
export function pyFloat(text: string): number | null {
  const s = pyStripNumber(text);
  if (!FLOAT_RE.test(s)) return null;
  const lower = s.toLowerCase().replace(/_/g, "");
  const sign = lower.startsWith("-") ? -1 : 1;
  const body = lower.replace(/^[+-]/, "");
  if (body === "nan") return NaN;
  if (body === "inf" || body === "infinity") return sign * Infinity;
  return Number(lower);
}

/** Python `int(text)` for base-10 text, or `null` where Python raises ValueError. */
export function pyInt(text: string): number | null {
  const s = pyStripNumber(text);
  if (!INT_RE.test(s)) return null;
  return Number(s.replace(/_/g, ""));
}

/**
 * Python `f"{x:.{digits}f}"`: rounds the exact binary value of x, ties to even (0.125 → "0.12"),
 * where JavaScript's toFixed rounds exact ties away from zero.
 */
export function formatFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const negative = x < 0 || Object.is(x, -0);
  const { mantissa, exponent } = decompose(Math.abs(x));
  const scale = 10n ** BigInt(digits);
  let q: bigint;
  if (exponent >= 0) {
    q = mantissa * 2n ** BigInt(exponent) * scale;
  } else {
    const num = mantissa * scale;
    const den = 2n ** BigInt(-exponent);
    q = num / den;
    const twiceRemainder = 2n * (num % den);
    if (twiceRemainder > den || (twiceRemainder === den && q % 2n === 1n)) q += 1n;
  }
  let s = q.toString().padStart(digits + 1, "0");
  if (digits > 0) s = `${s.slice(0, -digits)}.${s.slice(-digits)}`;
  return (negative ? "-" : "") + s;
}

/** x = mantissa · 2^exponent exactly, for finite x ≥ 0. */
function decompose(x: number): { mantissa: bigint; exponent: number } {
  if (x === 0) return { mantissa: 0n, exponent: 0 };
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const rawExponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  if (rawExponent === 0) return { mantissa: fraction, exponent: -1074 };
  return { mantissa: fraction | (1n << 52n), exponent: rawExponent - 1075 };
}

/** Python `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const abs = Math.abs(x);
  if (abs >= 1e16 || abs < 1e-4) {
    const [m, e] = x.toExponential().split("e");
    const exp = Number(e);
    return `${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  const s = String(x);
  return s.includes(".") ? s : `${s}.0`;
}
