/** The api_keys and key_usage rows ↔ ApiKey and KeyUsageTotals, for every backend (each keeps its own SQL). */
import type { ApiKey, KeyFields, KeyUsageTotals, ModelMode } from "../../gateway/keys/key-repository";
import type { ColumnCodec, Row } from "./codec";

/** Money is kept in millionths, as whole numbers. */
export const MICROS = 1_000_000;

/** The key fields an update may set, by column (models and balance are converted on the way). */
export const KEY_COLUMNS: Record<Exclude<keyof KeyFields, "models" | "balance">, string> = {
  name: "name",
  status: "status",
  notBefore: "not_before",
  expiresAt: "expires_at",
  modelMode: "model_mode",
  quotaTokens: "quota_tokens",
  rpm: "rpm",
  rpd: "rpd",
  concurrency: "concurrency",
  maxTokens: "max_tokens",
};

export function keyFromRow(r: Row, c: ColumnCodec): ApiKey {
  return {
    id: r.id as string,
    name: r.name as string,
    prefix: r.prefix as string,
    hash: r.hash as string,
    status: r.status as string,
    notBefore: c.numOrNull(r.not_before),
    expiresAt: c.numOrNull(r.expires_at),
    modelMode: r.model_mode as ModelMode | null,
    models: JSON.parse(r.models as string),
    quotaTokens: c.numOrNull(r.quota_tokens),
    balance: r.balance_micros === null ? null : c.num(r.balance_micros) / MICROS,
    rpm: c.numOrNull(r.rpm),
    rpd: c.numOrNull(r.rpd),
    concurrency: c.numOrNull(r.concurrency),
    maxTokens: c.numOrNull(r.max_tokens),
    createdAt: c.num(r.created_at),
    updatedAt: c.num(r.updated_at),
  };
}

export function usageTotalsFromRow(r: Row, c: ColumnCodec): KeyUsageTotals {
  const input = c.num(r.input_tokens);
  const output = c.num(r.output_tokens);
  return { requests: c.num(r.requests), inputTokens: input, outputTokens: output, tokens: input + output, spent: c.num(r.spent_micros) / MICROS, resetAt: c.numOrNull(r.reset_at) };
}
