/**
 * Reading an environment's settings (a scenario's `config` or `dataset.config`): each bad key or value throws an
 * Error that names it as `<where>.<key>`.
 */

/** Throws a clear error for config keys an environment does not know. */
export function checkConfigKeys(where: string, config: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(config)) {
    if (!known.includes(key)) {
      throw new Error(`${where}: unknown key '${key}' (expected one of: ${known.join(", ") || "none"})`);
    }
  }
}

/** `config[key]`: an integer at least `minimum`, or `fallback` when absent. */
export function integerSetting<F>(
  where: string,
  config: Record<string, unknown>,
  key: string,
  fallback: F,
  minimum: number,
): number | F {
  const value = config[key];
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < minimum) {
    throw new Error(`${where}.${key}: expected an integer >= ${minimum}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** `config[key]`: true or false, or `fallback` when absent. */
export function booleanSetting(where: string, config: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = config[key];
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new Error(`${where}.${key}: expected true or false`);
  return value;
}

/** A config of integer settings only: the keys of `defaults`, each at least its minimum. */
export function integerConfig<K extends string>(
  where: string,
  config: Record<string, unknown>,
  defaults: Readonly<Record<K, number>>,
  minimums: Readonly<Record<K, number>>,
): Record<K, number> {
  const keys = Object.keys(defaults) as K[];
  checkConfigKeys(where, config, keys);
  const out: Record<K, number> = { ...defaults };
  for (const key of keys) out[key] = integerSetting(where, config, key, defaults[key], minimums[key]);
  return out;
}
