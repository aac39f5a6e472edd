/**
 * The pool's health state kept in this process: what one instance without Redis uses. Deadlines only extend; the
 * probe claim is a deadline too, so a probe whose request never ends frees its claim after `ttlMs`.
 */
import { OutcomeWindow } from "./outcome-window";
import type { AccountHealth, PoolStateStore } from "./pool-port";

/** No model cooling: shared by every read that finds none (the usual case), so a read allocates no object for it. */
const NO_MODEL_COOLING: Readonly<Record<string, number>> = Object.freeze({});

interface Entry {
  coolingUntil: number | null;
  modelCoolingUntil: Record<string, number>;
  disabled: { reason: string; manual: boolean } | null;
  probeUntil: number;
  reason: string | null;
  inFlight: number;
  /** Outcomes in the rolling window, counted per second. */
  outcomes: OutcomeWindow;
}

function fresh(): Entry {
  return { coolingUntil: null, modelCoolingUntil: {}, disabled: null, probeUntil: 0, reason: null, inFlight: 0, outcomes: new OutcomeWindow() };
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
        modelCoolingUntil: modelCoolingAfter(e.modelCoolingUntil, now),
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
    return this.entry(name).outcomes.record(failed, nowMs, windowMs);
  }

  async adjustInFlight(name: string, delta: 1 | -1): Promise<number> {
    const e = this.entry(name);
    e.inFlight = Math.max(0, e.inFlight + delta);
    return e.inFlight;
  }
}

/** The model cooldowns still running at `now` (the shared empty object when there are none). */
function modelCoolingAfter(all: Record<string, number>, now: number): Readonly<Record<string, number>> {
  let out: Record<string, number> | null = null;
  for (const model in all) {
    const until = all[model]!;
    if (until > now) (out ??= {})[model] = until;
  }
  return out ?? NO_MODEL_COOLING;
}
