/** A small seeded generator (mulberry32), so the demo's sample clients and traffic look the same on every run. */
export interface DemoRandom {
  /** In [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** One of the values, by weight. */
  pick<T>(weighted: ReadonlyArray<readonly [T, number]>): T;
}

export function demoRandom(seed: number): DemoRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick(weighted) {
      const total = weighted.reduce((n, [, w]) => n + w, 0);
      let r = next() * total;
      for (const [value, w] of weighted) {
        r -= w;
        if (r < 0) return value;
      }
      return weighted[weighted.length - 1]![0];
    },
  };
}

/**
 * How busy a moment is, 0.25 at night to 1 in the early afternoon: people use apps by day. The clock is the
 * demo's own, with `now` in the busiest hour, so a newcomer's first look (the last hour) shows the most activity
 * and the history never rises above today's figures.
 */
export function dailyRhythm(ms: number, now: number): number {
  const hour = (((13 + (ms - now) / 3_600_000) % 24) + 24) % 24;
  return 0.25 + 0.75 * Math.max(0, Math.sin((Math.PI * (hour - 5)) / 16));
}
