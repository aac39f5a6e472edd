/**
 * The pool of upstream accounts: one call picks an account (rules/choose-account.ts), posts, and — when another
 * account could take over — holds the stream's opening events until its first content (opening-hold.ts). A failure
 * before that point (no connection, no headers in time, 408, 429, 5xx, 401/402/403, an `error` event or
 * `response.failed`, a cut) is recorded against the account (rules/cooldown.ts) and the call moves on to the next
 * account, each tried at most once; the caller sees nothing of the failed attempts. After the first content the call
 * belongs to its account: a failure then ends the stream in-band, as it always has.
 *
 * A pool of one takes a short path: no health read, no choice, no hold (there is nowhere to fail over to), and every
 * call goes to the account whatever its cooldown (the upstream is the only judge left); its failures are still
 * recorded for the reports. The one state it honours is an operator's disable (sole-account-gate.ts: kept, read
 * again at most once a second): then calls are refused with a 503 that says so.
 */
import { AppError } from "../../errors";
import type { Logger } from "../../log";
import type { HeldBody } from "../pipeline/event-source";
import type { ResponsesRequest } from "../wire/responses-types";
import { holdOpening } from "./opening-hold";
import type { AccountHealth, FailureKind, PoolEvents, PoolStateStore, UpstreamAccount } from "./pool-port";
import { postResponses, type PostedRequest } from "./post-responses";
import { allOutReply, anyUsable, chooseAccount, upstreamModelOf, type OutAccount } from "./rules/choose-account";
import { withoutForeignReasoning } from "./rules/foreign-reasoning";
import { classifyFailure, consequenceOf, PROBE_TTL_MS, resetDeadline, WINDOW_COOL_MS, WINDOW_MS, windowTripped, type AttemptFailure } from "./rules/cooldown";
import { SoleAccountGate } from "./sole-account-gate";
import type { ParameterQuirks } from "./unsupported-params";
import type { Upstream, UpstreamReply } from "./upstream";
import { UpstreamRefusal } from "./upstream-errors";

export interface PoolDeps {
  accounts: readonly UpstreamAccount[];
  /** Each account's client (its base URL and key). */
  clientOf: (account: UpstreamAccount) => Pick<Upstream, "postResponses">;
  state: PoolStateStore;
  events: PoolEvents;
  /** The refused parameters of an account's upstream (learnt and applied per account: account-quirks.ts). */
  quirksOf: (account: UpstreamAccount) => ParameterQuirks;
  log: Logger;
  now: () => number;
  /** A number in [0, 1) for the weighted choice. */
  random?: () => number;
  /** The largest upstream event read (GANTRY_MAX_UPSTREAM_EVENT_BYTES), for the opening hold's decoder. */
  maxEventBytes: number;
  /** Silence before the first content that commits a call to its account anyway (the keep-alive interval). */
  holdQuietMs: number;
}

export interface PoolRequest {
  /** The public model name (the account's model map turns it into what is sent). */
  model: string;
  request: ResponsesRequest;
  signal: AbortSignal;
  /** The account a continued response was produced by: preferred while it is usable. */
  pinned?: string | null;
  /** The prompt_cache_key, else the API key's id: the same key prefers the same account. */
  affinity?: string | null;
  /** Encrypted reasoning in the input, by its content, and the account that produced it (left out elsewhere). */
  encryptedOwners?: ReadonlyMap<string, string | null> | null;
  /** For the log lines. */
  requestId?: string;
}

export interface PooledReply extends PostedRequest {
  account: UpstreamAccount;
  /** The body to read: the upstream's, or its held opening bytes and the rest. */
  body: ReadableStream<Uint8Array> | HeldBody;
  /** The stream on this account is over (any way): its in-flight count comes back. Idempotent. */
  release: () => void;
}

export interface PooledRawReply {
  reply: UpstreamReply;
  account: UpstreamAccount;
  release: () => void;
}

/** Statuses a raw call fails over on (the reply is otherwise passed on untouched). */
const RAW_FAILOVER_STATUS = (s: number) => s === 408 || s === 429 || s === 401 || s === 402 || s === 403 || s >= 500;

type Attempt<T> = { ok: true; reply: T } | { ok: false; error: unknown; kind: FailureKind | null };

export class UpstreamPool {
  readonly accounts: readonly UpstreamAccount[];
  private readonly names: string[];
  private readonly single: UpstreamAccount | null;
  /** A pool of one: whether an operator disabled its account (null for a pool of several, which reads the state). */
  private readonly soleGate: SoleAccountGate | null;
  private readonly random: () => number;

  constructor(private readonly deps: PoolDeps) {
    this.accounts = deps.accounts;
    this.names = deps.accounts.map((a) => a.name);
    this.single = deps.accounts.length === 1 ? deps.accounts[0]! : null;
    this.soleGate = this.single ? new SoleAccountGate(deps.state, this.single.name) : null;
    this.random = deps.random ?? Math.random;
  }

  /** Posts a Responses request to an account, failing over before the first content; throws the AppError the caller gets. */
  async post(req: PoolRequest): Promise<PooledReply> {
    const single = this.single;
    if (single) {
      const off = this.soleGate!.disabledByOperator();
      if (off === true || (off !== false && (await off))) throw soleDisabled(single);
      const r = await this.attempt(single, req, false, false);
      if (r.ok) return r.reply;
      throw r.error;
    }
    // The last account left is not held: what it says, an in-band failure included, is the caller's answer.
    return this.failover(req.signal, req.model, req.pinned ?? null, req.affinity ?? null, (account, probe, more) => this.attempt(account, req, probe, more));
  }

  /** Raw passthrough: the body goes as written; fails over on the reply's status only (the stream is not held). */
  async postRaw(text: string, signal: AbortSignal, callerHeaders: Headers, model: string): Promise<PooledRawReply> {
    const single = this.single;
    if (single) {
      const off = this.soleGate!.disabledByOperator();
      if (off === true || (off !== false && (await off))) throw soleDisabled(single);
      const r = await this.attemptRaw(single, text, signal, callerHeaders, model, false, null);
      if (r.ok) return r.reply;
      throw r.error;
    }
    // A failed reply is kept until another account is found to try: with none left, the caller gets it as it came.
    let failed: PooledRawReply | null = null;
    try {
      return await this.failover(signal, model, null, null, async (account, probe) => {
        const r = await this.attemptRaw(account, text, signal, callerHeaders, model, probe, (reply) => {
          failed?.reply.response.body?.cancel().catch(() => {});
          failed = reply;
        });
        if (r.ok && failed && failed !== r.reply) failed.reply.response.body?.cancel().catch(() => {});
        return r;
      });
    } catch (err) {
      const last = failed as PooledRawReply | null;
      if (last && !signal.aborted) return last;
      throw err;
    }
  }

  /** An operator enabled or disabled an account on this instance: a pool of one reads its state again at the next call. */
  operatorChanged(): void {
    this.soleGate?.invalidate();
  }

  /** The failover loop: choose, try, and on an account's failure choose again among the accounts not tried yet. */
  private async failover<T>(
    signal: AbortSignal,
    model: string,
    pinned: string | null,
    affinity: string | null,
    /** `more`: another account could take over if this one fails. */
    attempt: (account: UpstreamAccount, probe: boolean, more: boolean) => Promise<Attempt<T>>,
  ): Promise<T> {
    const tried = new Set<string>();
    let last: { error: unknown; kind: FailureKind | null; account: string } | null = null;
    // Read once a call: an account tried is out of the choice by `tried` already, so a failover reads nothing again
    // (with Redis, a round trip saved per failover); the others' health is as fresh as it was for the first choice.
    const health = await this.deps.state.read(this.names);
    for (;;) {
      const nowMs = this.deps.now();
      const choice = chooseAccount({ accounts: this.accounts, health, model, nowMs, tried, pinned, affinity, random: this.random() });
      if (!choice.account) throw await this.allOut(model, choice.out, tried, last);
      const account = choice.account;
      tried.add(account.name);
      // Another call claimed the probe: this account waits, the call goes on with the others.
      if (choice.probe && !(await this.deps.state.claimProbe(account.name, PROBE_TTL_MS))) continue;
      if (last) this.deps.events.failover(last.account);
      const more = anyUsable({ accounts: this.accounts, health, model, nowMs, tried });
      const r = await attempt(account, choice.probe, more);
      if (r.ok) return r.reply;
      // The caller's own doing (a 400) or the caller gone: no other account would change it.
      if (r.kind === null || signal.aborted) throw r.error;
      last = { error: r.error, kind: r.kind, account: account.name };
    }
  }

  private async attempt(account: UpstreamAccount, req: PoolRequest, probe: boolean, hold: boolean): Promise<Attempt<PooledReply>> {
    const { state, events } = this.deps;
    const name = account.name;
    events.attempt(name);
    const release = holdInFlight(state, name);
    const upstreamModel = upstreamModelOf(account, req.model);
    let request = upstreamModel === req.request.model ? req.request : { ...req.request, model: upstreamModel };
    // A pool of one has no other account to have produced what the input carries.
    if (req.encryptedOwners && this.single === null) request = withoutForeignReasoning(request, name, req.encryptedOwners);
    let posted: PostedRequest;
    try {
      posted = await postResponses({ upstream: this.deps.clientOf(account), quirks: this.deps.quirksOf(account) }, upstreamModel, request, req.signal);
    } catch (err) {
      release();
      if (req.signal.aborted) return { ok: false, error: err, kind: null };
      const kind = await this.recordFailure(account, req.model, upstreamModel, failureOfError(err), probe, req.requestId, err);
      return { ok: false, error: err, kind };
    }
    events.firstByte(name, posted.reply.ttfbMs);
    let body: ReadableStream<Uint8Array> | HeldBody = posted.reply.response.body!;
    if (hold) {
      const held = await holdOpening(posted.reply.response.body!, this.deps.maxEventBytes, this.deps.holdQuietMs);
      if (!held.committed) {
        release();
        const error = new AppError("upstream_error", `The upstream failed before any content: ${held.message}`, { rawCode: "upstream_error" });
        if (req.signal.aborted) return { ok: false, error, kind: null };
        const kind = await this.recordFailure(account, req.model, upstreamModel, { status: null, inBand: held.inBand, code: held.code }, probe, req.requestId, error);
        return { ok: false, error, kind };
      }
      body = held.body;
    }
    if (this.single === null) {
      const back = this.recordSuccess(name, probe);
      if (back) await back;
    }
    return { ok: true, reply: { ...posted, account, body, release } };
  }

  private async attemptRaw(
    account: UpstreamAccount,
    text: string,
    signal: AbortSignal,
    callerHeaders: Headers,
    model: string,
    probe: boolean,
    keepFailed: ((reply: PooledRawReply) => void) | null,
  ): Promise<Attempt<PooledRawReply>> {
    const { state, events } = this.deps;
    const name = account.name;
    events.attempt(name);
    const release = holdInFlight(state, name);
    let reply: UpstreamReply;
    try {
      reply = await this.deps.clientOf(account).postResponses(text, signal, { raw: true, callerHeaders });
    } catch (err) {
      release();
      if (signal.aborted) return { ok: false, error: err, kind: null };
      return { ok: false, error: err, kind: await this.recordFailure(account, model, model, failureOfError(err), probe, undefined, err) };
    }
    events.firstByte(name, reply.ttfbMs);
    const status = reply.response.status;
    if (keepFailed && RAW_FAILOVER_STATUS(status)) {
      const failure: AttemptFailure = { status, code: null };
      const error = new AppError("upstream_error", `The upstream failed (${status}).`);
      const kind = await this.recordFailure(account, model, model, failure, probe, undefined, error, reply.response.headers);
      release();
      keepFailed({ reply, account, release: () => {} });
      return { ok: false, error, kind };
    }
    if (this.single === null) {
      const back = this.recordSuccess(name, probe);
      if (back) await back;
    }
    return { ok: true, reply: { reply, account, release } };
  }

  /**
   * A probe that got content brings its account back (awaited: the next call must find it back); any other success
   * is counted in the rolling window without waiting for it, and without a promise of its own here (every call of a
   * pool of several passes by).
   */
  private recordSuccess(name: string, probe: boolean): Promise<void> | null {
    if (probe) return this.probeSucceeded(name);
    void this.deps.state.recordOutcome(name, false, this.deps.now(), WINDOW_MS);
    return null;
  }

  private async probeSucceeded(name: string): Promise<void> {
    await this.deps.state.enable(name);
    this.deps.log.info("upstream account back after a successful probe", { account: name });
  }


  /**
   * Records a failed attempt and what it does to the account: a rate limit cools it (for the model alone when the
   * upstream's message names that model) until the latest deadline the upstream gave; credentials or quota take it
   * out until a probe; anything else counts in the rolling window, which takes it out (then probes it) past its
   * threshold. A failed probe takes it out again. Null: not the account's fault.
   */
  private async recordFailure(
    account: UpstreamAccount,
    model: string,
    upstreamModel: string,
    failure: AttemptFailure,
    probe: boolean,
    requestId: string | undefined,
    err: unknown,
    headers: Headers | null = err instanceof UpstreamRefusal ? err.upstreamHeaders : null,
  ): Promise<FailureKind | null> {
    const kind = classifyFailure(failure);
    if (kind === null) return null;
    const { state, events, now, log } = this.deps;
    const name = account.name;
    events.failure(name, kind);
    const at = now();
    const resetAt = headers ? resetDeadline((h) => headers.get(h), at) : null;
    const c = consequenceOf(kind, resetAt, at);
    let until: number | null = null;
    if (c.action === "cool") {
      const detail = err instanceof UpstreamRefusal ? err.detail : err instanceof Error ? err.message : "";
      const forModel = upstreamModel !== "" && detail.includes(upstreamModel) ? model : null;
      await state.cool(name, forModel, c.untilMs, kind);
      until = c.untilMs;
    } else {
      let out = c.action === "disable";
      let probeAt = c.action === "disable" ? c.probeAtMs : at + WINDOW_COOL_MS;
      if (c.action === "count") {
        const w = await state.recordOutcome(name, true, at, WINDOW_MS);
        out = probe || windowTripped(w.failures, w.requests);
        probeAt = at + WINDOW_COOL_MS;
      }
      if (out) {
        await state.disable(name, kind, false);
        await state.cool(name, null, probeAt, kind);
        until = probeAt;
      }
    }
    if (until !== null) events.cooled(name, until, kind);
    log.warn("upstream account failed before any content", {
      requestId,
      account: name,
      kind,
      status: failure.status ?? undefined,
      code: failure.code ?? (err instanceof AppError ? err.code : undefined),
      outUntil: until === null ? undefined : new Date(until).toISOString(),
    });
    return kind;
  }

  /**
   * Nothing left to try. When nothing was tried, every account that serves the model is out: 429 (rate limits and
   * full accounts: waiting helps) or 503, with Retry-After the soonest return. When some were tried and failed, the
   * same answer over every account that serves the model, those just tried counted as out for a second at least. A
   * pool where no account serves the model answers 404 model_not_found.
   */
  private async allOut(model: string, out: OutAccount[], tried: ReadonlySet<string>, last: { error: unknown; kind: FailureKind | null } | null): Promise<AppError> {
    const nowMs = this.deps.now();
    const all = [...out];
    if (tried.size > 0) {
      const health = await this.deps.state.read([...tried]);
      for (const name of tried) {
        const h = health.get(name);
        const until = Math.max(h?.coolingUntil ?? 0, h?.modelCoolingUntil[model] ?? 0, nowMs + 1000);
        all.push({ name, untilMs: until, why: ((h?.reason as FailureKind | null) ?? last?.kind ?? "server_error") as FailureKind });
      }
    }
    if (all.length === 0) {
      return new AppError("not_found", `The model '${model}' is not served by any upstream account.`, { rawCode: "model_not_found", type: "invalid_request_error", param: "model" });
    }
    const reply = allOutReply(all, nowMs);
    const headers = { "retry-after": String(reply.retryAfterSeconds) };
    if (reply.status === 429) {
      return new AppError("too_many_requests", `Every upstream account serving '${model}' is rate limited; retry after ${reply.retryAfterSeconds} s.`, { rawCode: "upstream_rate_limited", headers });
    }
    return new AppError("service_unavailable", `No upstream account serving '${model}' is available; retry after ${reply.retryAfterSeconds} s.`, { rawCode: "upstream_unavailable", headers });
  }
}

/** The refusal of a pool of one whose account an operator disabled. */
function soleDisabled(account: UpstreamAccount): AppError {
  return new AppError(
    "service_unavailable",
    `The upstream account '${account.name}' is disabled by an operator: calls are refused until it is enabled again (gantry upstreams enable ${account.name}).`,
    { rawCode: "upstream_unavailable" },
  );
}

/** What an attempt's thrown error says about the account. */
function failureOfError(err: unknown): AttemptFailure {
  if (err instanceof UpstreamRefusal) return { status: err.upstreamStatus, code: err.upstreamCode };
  if (err instanceof AppError) {
    if (err.code === "upstream_timeout") return { status: null, transport: "timeout", code: null };
    if (err.code === "upstream_unavailable") return { status: null, transport: "connect", code: null };
  }
  return { status: null, code: null };
}

/** Counts one more stream on the account; the function returned counts it off, once however often it is called. */
function holdInFlight(state: PoolStateStore, name: string): () => void {
  void state.adjustInFlight(name, 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    void state.adjustInFlight(name, -1);
  };
}
