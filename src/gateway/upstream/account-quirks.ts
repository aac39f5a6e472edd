/**
 * Refused parameters per account. Two accounts of one pool may be different providers: a parameter one of them
 * refuses may be one the other honours, so what is learnt from an account's refusal is applied to that account
 * alone. The unit is the upstream (its base URL, as `upstreamIdentity` names it, which is also the key of what is
 * stored): accounts on the same base URL are one provider and share what is learnt.
 */
import type { UpstreamAccount } from "./pool-port";
import { upstreamIdentity } from "./refused-params-repository";
import type { ParameterQuirks } from "./unsupported-params";

export class AccountQuirks {
  private readonly byName = new Map<string, ParameterQuirks>();
  private readonly all: ParameterQuirks[] = [];

  /** `make`: the quirks of one upstream, given its stored name and the accounts on it (for the log lines). */
  constructor(accounts: readonly Pick<UpstreamAccount, "name" | "baseUrl">[], make: (upstream: string, accounts: string[]) => ParameterQuirks) {
    const names = new Map<string, string[]>();
    for (const a of accounts) {
      const id = upstreamIdentity(a.baseUrl);
      names.set(id, [...(names.get(id) ?? []), a.name]);
    }
    const byUrl = new Map<string, ParameterQuirks>();
    for (const [id, accountNames] of names) {
      const q = make(id, accountNames);
      byUrl.set(id, q);
      this.all.push(q);
    }
    for (const a of accounts) this.byName.set(a.name, byUrl.get(upstreamIdentity(a.baseUrl))!);
  }

  /** The quirks of an account (one of those given at construction). */
  of(account: Pick<UpstreamAccount, "name">): ParameterQuirks {
    const q = this.byName.get(account.name);
    if (!q) throw new Error(`no quirks for the upstream account ${account.name}`);
    return q;
  }

  /** Reads what was learnt before for every upstream (at start, once). Returns how many were loaded. */
  async load(): Promise<number> {
    let n = 0;
    for (const q of this.all) n += await q.load();
    return n;
  }
}
