/**
 * The page's store is one zustand store made of slices (./lab-state.ts), each a nested object of its own: a slice
 * writes its own fields through a `SliceSet`, and reads the others through `get` when it must.
 */

/** Writes some of slice `S`'s fields (the rest, and the other slices, stay as they are). */
export type SliceSet<S> = (changes: Partial<S> | ((slice: S) => Partial<S>)) => void;

/** The `SliceSet` of the slice at `key` of a store whose state is `T`. */
export function sliceSetter<T, K extends keyof T>(set: (fn: (state: T) => Partial<T>) => void, key: K): SliceSet<T[K]> {
  return (changes) =>
    set((state) => {
      const slice = state[key];
      const next = typeof changes === "function" ? changes(slice) : changes;
      return { [key]: { ...slice, ...next } } as unknown as Partial<T>;
    });
}
