/**
 * The one schema of key fields that the admin API and the CLI share, and the view of a key they both show.
 * A secret or hash never appears in a view.
 */
import { t, type Static } from "elysia";
import { AppError } from "../errors";
import type { ApiKey, KeyFields, KeyUsageTotals } from "../store/keys";

const Limit = t.Union([t.Integer({ minimum: 0 }), t.Null()]);
const ModelList = t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 1000 });

export const KeyInput = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 100, pattern: "^[^\\s].*$" })),
    status: t.Optional(t.Union([t.Literal("active"), t.Literal("disabled")])),
    notBefore: t.Optional(t.Union([t.String({ format: "date-time" }), t.Null()])),
    expiresAt: t.Optional(t.Union([t.String({ format: "date-time" }), t.Null()])),
    allowModels: t.Optional(ModelList),
    denyModels: t.Optional(ModelList),
    /** Clears the model list: every model allowed. */
    allModels: t.Optional(t.Boolean()),
    quotaTokens: t.Optional(Limit),
    balance: t.Optional(t.Union([t.Number({ minimum: 0 }), t.Null()])),
    rpm: t.Optional(Limit),
    rpd: t.Optional(Limit),
    concurrency: t.Optional(Limit),
    maxTokens: t.Optional(Limit),
    resetUsage: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
);
export type KeyInput = Static<typeof KeyInput>;

function time(iso: string | null | undefined, field: string): number | null | undefined {
  if (iso === undefined || iso === null) return iso;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new AppError("invalid_request", `'${field}' is not an ISO 8601 date-time.`, { param: field });
  return ms;
}

export function keyFieldsFrom(input: KeyInput): KeyFields {
  if (input.allowModels && input.denyModels) {
    throw new AppError("invalid_request", "A key has either a model whitelist or a blacklist, not both.", { param: "allowModels" });
  }
  const fields: KeyFields = {
    name: input.name,
    status: input.status,
    notBefore: time(input.notBefore, "notBefore"),
    expiresAt: time(input.expiresAt, "expiresAt"),
    quotaTokens: input.quotaTokens,
    balance: input.balance,
    rpm: input.rpm,
    rpd: input.rpd,
    concurrency: input.concurrency,
    maxTokens: input.maxTokens,
  };
  if (input.allowModels) Object.assign(fields, { modelMode: "allow", models: input.allowModels });
  else if (input.denyModels) Object.assign(fields, { modelMode: "deny", models: input.denyModels });
  else if (input.allModels) Object.assign(fields, { modelMode: null, models: [] });
  return fields;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * What a key can do right now, in admission's order: a disabled key is `disabled` whatever its dates, then the
 * validity period. `status` stays the stored switch; `state` is what operators need to see.
 */
export type KeyState = "active" | "disabled" | "expired" | "not_yet_valid";

export function keyState(key: Pick<ApiKey, "status" | "notBefore" | "expiresAt">, now: number): KeyState {
  if (key.status !== "active") return "disabled";
  if (key.notBefore !== null && now < key.notBefore) return "not_yet_valid";
  if (key.expiresAt !== null && now >= key.expiresAt) return "expired";
  return "active";
}

export function keyView(key: ApiKey, usage: KeyUsageTotals, now = Date.now()) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    status: key.status,
    state: keyState(key, now),
    notBefore: iso(key.notBefore),
    expiresAt: iso(key.expiresAt),
    modelMode: key.modelMode,
    models: key.models,
    limits: {
      quotaTokens: key.quotaTokens,
      balance: key.balance,
      rpm: key.rpm,
      rpd: key.rpd,
      concurrency: key.concurrency,
      maxTokens: key.maxTokens,
    },
    usage: {
      requests: usage.requests,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      tokens: usage.tokens,
      spent: Number(usage.spent.toFixed(6)),
      remainingTokens: key.quotaTokens === null ? null : Math.max(0, key.quotaTokens - usage.tokens),
      remainingBalance: key.balance === null ? null : Math.max(0, Number((key.balance - usage.spent).toFixed(6))),
    },
    createdAt: iso(key.createdAt),
    updatedAt: iso(key.updatedAt),
  };
}
