/**
 * Parameters an upstream refuses outright ("Unsupported parameter: temperature", as stream-only backends answer for
 * `temperature`, `top_p`, `max_output_tokens` on some models). A client that sets them would fail on every call;
 * instead Gantry drops each such parameter and asks again (post-responses.ts), and remembers it for that upstream and
 * model, in memory and in the store, so the next calls, after a restart too, go without it from the start.
 * Operators can name parameters to drop always (GANTRY_UPSTREAM_DROP_PARAMS).
 */
import { NEVER_DROPPED_PARAMS } from "../../config";
import { isAppError } from "../../errors";
import type { RefusedParamRepository } from "./refused-params-repository";

/** What a request cannot do without (the list the setting's rule holds): an upstream claiming not to support these is
 *  not answered by dropping them. */
const NEVER_DROPPED = new Set(NEVER_DROPPED_PARAMS);

/** The parameter an upstream 400 says it does not support, or null (FastAPI and OpenAI wordings). */
export function unsupportedParameter(err: unknown): string | null {
  if (!isAppError(err) || err.status !== 400) return null;
  const fromCode = err.code === "unsupported_parameter" && typeof err.param === "string" ? err.param : null;
  const fromText = /Unsupported parameter:\s*'?([A-Za-z_][A-Za-z0-9_]*)'?/.exec(err.message)?.[1] ?? null;
  const name = fromCode ?? fromText;
  return name !== null && !NEVER_DROPPED.has(name) ? name : null;
}

/** `request` without the named top-level fields, and which of them it had. */
export function withoutParams<T extends Record<string, unknown>>(request: T, names: Iterable<string>): { request: T; dropped: string[] } {
  const dropped: string[] = [];
  let out = request;
  for (const name of names) {
    if (!Object.hasOwn(out, name)) continue;
    if (out === request) out = { ...request };
    delete out[name];
    dropped.push(name);
  }
  return { request: out, dropped };
}

export interface QuirkStore {
  repository: RefusedParamRepository;
  /** The upstream's name in the store (`upstreamIdentity`). */
  upstream: string;
  now: () => number;
  /** A learnt parameter that could not be written (it still applies until a restart). */
  onWriteError?: (err: unknown, model: string, param: string) => void;
}

export class ParameterQuirks {
  private readonly learnt = new Map<string, Set<string>>();

  constructor(
    private readonly always: readonly string[],
    /** Told once per model and parameter, when it is first learnt. */
    private readonly onLearn: (model: string, param: string) => void = () => {},
    /** Where learnt parameters are kept across restarts; none: in memory only. */
    private readonly store?: QuirkStore,
  ) {}

  /** Reads what was learnt before (at start, once): calls read memory only. Returns how many were loaded. */
  async load(): Promise<number> {
    if (!this.store) return 0;
    const rows = await this.store.repository.list(this.store.upstream);
    for (const { model, param } of rows) this.remember(model, param);
    return rows.length;
  }

  /** What to drop before calling the upstream for `model`. */
  droppedFor(model: string): string[] {
    const learnt = this.learnt.get(model);
    return learnt ? [...this.always, ...learnt] : [...this.always];
  }

  /** Remembers a refused parameter; the first time, tells `onLearn` and writes it to the store (not awaited). */
  learn(model: string, param: string): void {
    if (!this.remember(model, param)) return;
    this.onLearn(model, param);
    const store = this.store;
    if (!store) return;
    // The call that learnt it goes on at once; the row is for the next start, and a failed write costs only a relearning.
    store.repository.add(store.upstream, model, param, store.now()).catch((err) => store.onWriteError?.(err, model, param));
  }

  /** True when it was not known yet. */
  private remember(model: string, param: string): boolean {
    let set = this.learnt.get(model);
    if (!set) this.learnt.set(model, (set = new Set()));
    if (set.has(param)) return false;
    set.add(param);
    return true;
  }
}
