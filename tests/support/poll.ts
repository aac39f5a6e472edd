/**
 * The one way tests wait: ask `probe` every few milliseconds until `done` accepts its answer. Waiting on the
 * condition, never for a fixed time, keeps a test quick on an idle machine and right on a loaded one. The
 * deadline only bounds a test that is failing anyway, so it is generous; a promise of speed ("visible within
 * 0.1 s") is the caller's to assert, on `elapsedMs`.
 */

export interface PollOptions {
  /** Give up (throw) once this long has passed without `done` accepting an answer. */
  timeoutMs?: number;
  /** Pause between two probes. */
  stepMs?: number;
  /** Names the condition in the error thrown at the deadline. */
  what?: string;
}

export interface Polled<T> {
  /** The answer `done` accepted. */
  value: T;
  /** From the call until that answer came back: an upper bound on when the condition became true. */
  elapsedMs: number;
}

export const DEFAULT_POLL_TIMEOUT_MS = 5000;

export async function pollUntil<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean = Boolean,
  { timeoutMs = DEFAULT_POLL_TIMEOUT_MS, stepMs = 5, what = "the condition" }: PollOptions = {},
): Promise<Polled<T>> {
  const start = performance.now();
  for (;;) {
    const value = await probe();
    const elapsedMs = performance.now() - start;
    if (done(value)) return { value, elapsedMs };
    if (elapsedMs >= timeoutMs) {
      throw new Error(`waited ${Math.round(elapsedMs)} ms for ${what}; the last answer was ${describe(value)}`);
    }
    await Bun.sleep(stepMs);
  }
}

function describe(value: unknown): string {
  if (value instanceof Response) return `HTTP ${value.status}`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
