/**
 * The operators' view of the pool (PoolView): each account's state read from the shared state store, its counts
 * from this process, a test that asks the account for its model list, and the operator's disable/enable. What the
 * admin API, the back office and `gantry upstreams` show.
 *
 * State, first that applies: disabled (by an operator, or by an auth/quota failure until a probe succeeds), probing
 * (its one probe request is under way), cooling (the whole account, or only some models: then `until` is the last
 * of their deadlines and the reason names them), healthy.
 */
import { AppError } from "../../errors";
import type { AccountCounters } from "./pool-counters";
import type { AccountHealth, AccountState, AccountStatus, PoolStateStore, PoolView, UpstreamAccount } from "./pool-port";
import { UpstreamRefusal } from "./upstream-errors";

export type ProbeResult = { ok: boolean; status: number | null; message: string; ms: number };

/** Sends one probe to an account. */
export type AccountProbe = (account: UpstreamAccount) => Promise<ProbeResult>;

export const OPERATOR_REASON = "disabled by an operator";

export interface PoolReportDeps {
  accounts: readonly UpstreamAccount[];
  state: PoolStateStore;
  counters: { counters(account: string): AccountCounters };
  probe: AccountProbe;
  now: () => number;
  /** Told after an operator's disable or enable here (the pool of one keeps its account's state: pool.ts). */
  changed?: () => void;
}

export class PoolReport implements PoolView {
  constructor(private readonly deps: PoolReportDeps) {}

  async list(): Promise<AccountStatus[]> {
    const { accounts, state, counters, now } = this.deps;
    const healths = await state.read(accounts.map((a) => a.name));
    return accounts.map((a) => ({
      name: a.name,
      ...stateOf(healths.get(a.name)!, now()),
      inFlight: healths.get(a.name)!.inFlight,
      priority: a.priority,
      weight: a.weight,
      models: [...a.models],
      counters: counters.counters(a.name),
    }));
  }

  async test(name: string): Promise<ProbeResult> {
    return this.deps.probe(this.account(name));
  }

  async disable(name: string): Promise<void> {
    await this.deps.state.disable(this.account(name).name, OPERATOR_REASON, true);
    this.deps.changed?.();
  }

  async enable(name: string): Promise<void> {
    await this.deps.state.enable(this.account(name).name);
    this.deps.changed?.();
  }

  private account(name: string): UpstreamAccount {
    const found = this.deps.accounts.find((a) => a.name === name);
    if (!found) throw new AppError("not_found", `No upstream account is named ${JSON.stringify(name.slice(0, 100))}.`);
    return found;
  }
}

/** The state an operator sees, from the shared health (pure). */
export function stateOf(h: AccountHealth, now: number): { state: AccountState; until: string | null; reason: string | null } {
  if (h.disabled) return { state: "disabled", until: null, reason: h.disabled.reason };
  if (h.probing) return { state: "probing", until: null, reason: h.reason };
  if (h.coolingUntil !== null && h.coolingUntil > now) return { state: "cooling", until: new Date(h.coolingUntil).toISOString(), reason: h.reason };
  const models = Object.entries(h.modelCoolingUntil).filter(([, until]) => until > now);
  if (models.length > 0) {
    const last = Math.max(...models.map(([, until]) => until));
    const names = models.map(([m]) => m).sort().join(", ");
    return { state: "cooling", until: new Date(last).toISOString(), reason: `${h.reason ?? "cooling"} (only ${names})` };
  }
  return { state: "healthy", until: null, reason: null };
}

/** A probe that asks the account for its model list (GET {baseUrl}/models with the account's key). */
export function modelListProbe(clientOf: (account: UpstreamAccount) => { listModels(): Promise<unknown> }, clock: () => number = performance.now.bind(performance)): AccountProbe {
  return async (account) => {
    const started = clock();
    const ms = () => Math.round(clock() - started);
    try {
      const list = (await clientOf(account).listModels()) as { data?: unknown };
      const n = Array.isArray(list?.data) ? list.data.length : null;
      return { ok: true, status: 200, message: n === null ? "the model list answered" : `the model list answered with ${n} model${n === 1 ? "" : "s"}`, ms: ms() };
    } catch (err) {
      const status = err instanceof UpstreamRefusal ? err.upstreamStatus : null;
      const message = err instanceof AppError ? err.message : "the upstream could not be reached";
      return { ok: false, status, message, ms: ms() };
    }
  };
}
