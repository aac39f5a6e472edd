/**
 * The pool's health state kept in this process: what one instance without Redis uses. Deadlines only extend; the
 * probe claim is a deadline too, so a probe whose request never ends frees its claim after `ttlMs`.
 */
import type { AccountHealth, PoolStateStore } from "./pool-port";

interface Entry {
  coolingUntil: number | null;
  modelCoolingUntil: Record<string, number>;
  disabled: { reason: string; manual: boolean } | null;
  probeUntil: number;
  reason: string | null;
  inFlight: number;
  /** Outcomes in the rolling window, counted per second (a busy account adds no entry per request): second → [requests, failures]. */
  outcomes: Map<number, [number, number]>;
}

function fresh(): Entry {
  return { coolingUntil: null, modelCoolingUntil: {}, disabled: null, probeUntil: 0, reason: null, inFlight: 0, outcomes: new Map() };
}

export class MemoryPoolState implements PoolStateStore {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  private entry(name: string): Entry {
    let e = this.entries.get(name);
    if (!e) this.entries.set(name, (e = fresh()));
    return e;
  }

  async read(names: readonly string[]): Promise<Map<string, AccountHealth>> {
    const now = this.now();
    const out = new Map<string, AccountHealth>();
    for (const name of names) {
      const e = this.entry(name);
      out.set(name, {
        coolingUntil: e.coolingUntil !== null && e.coolingUntil > now ? e.coolingUntil : null,
        modelCoolingUntil: Object.fromEntries(Object.entries(e.modelCoolingUntil).filter(([, until]) => until > now)),
        disabled: e.disabled,
        probing: e.probeUntil > now,
        reason: e.reason,
        inFlight: e.inFlight,
      });
    }
    return out;
  }

  async cool(name: string, model: string | null, untilMs: number, reason: string): Promise<void> {
    const e = this.entry(name);
    if (model === null) e.coolingUntil = Math.max(e.coolingUntil ?? 0, untilMs);
    else e.modelCoolingUntil[model] = Math.max(e.modelCoolingUntil[model] ?? 0, untilMs);
    e.reason = reason;
  }

  async disable(name: string, reason: string, manual: boolean): Promise<void> {
    const e = this.entry(name);
    // An operator's disabling is not undone by a probe: keep `manual` once set.
    e.disabled = { reason, manual: manual || (e.disabled?.manual ?? false) };
    e.reason = reason;
  }

  async enable(name: string): Promise<void> {
    const e = this.entry(name);
    e.coolingUntil = null;
    e.modelCoolingUntil = {};
    e.disabled = null;
    e.probeUntil = 0;
    e.reason = null;
    e.outcomes.clear();
  }

  async claimProbe(name: string, ttlMs: number): Promise<boolean> {
    const e = this.entry(name);
    const now = this.now();
    if (e.probeUntil > now) return false;
    e.probeUntil = now + ttlMs;
    return true;
  }

  async recordOutcome(name: string, failed: boolean, nowMs: number, windowMs: number): Promise<{ failures: number; requests: number }> {
    const e = this.entry(name);
    const second = Math.floor(nowMs / 1000);
    const oldest = Math.floor((nowMs - windowMs) / 1000);
    const bucket = e.outcomes.get(second) ?? [0, 0];
    bucket[0] += 1;
    if (failed) bucket[1] += 1;
    e.outcomes.set(second, bucket);
    let requests = 0;
    let failures = 0;
    for (const [s, [r, f]] of e.outcomes) {
      if (s <= oldest) e.outcomes.delete(s);
      else (requests += r), (failures += f);
    }
    return { failures, requests };
  }

  async adjustInFlight(name: string, delta: 1 | -1): Promise<number> {
    const e = this.entry(name);
    e.inFlight = Math.max(0, e.inFlight + delta);
    return e.inFlight;
  }
}
