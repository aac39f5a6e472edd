/** A counting semaphore for per-key concurrency: acquire never waits (a refusal is the caller's answer). */
export interface Semaphore {
  limit: number;
  active: number;
}

export function createSemaphore(limit: number): Semaphore {
  return { limit, active: 0 };
}

export function canAcquire(s: Semaphore): boolean {
  return s.active < s.limit;
}

export function acquire(s: Semaphore): void {
  s.active += 1;
}

export function release(s: Semaphore): void {
  if (s.active > 0) s.active -= 1;
}
