/**
 * The rules of a key's fields (the one schema the admin API and the CLI share), and the view of a key they both show.
 * A secret or hash never appears in a view.
 */
import { Value } from "@sinclair/typebox/value";
import { Type as t, type Static } from "@sinclair/typebox";
import { CONTROL_CLASS, firstControl } from "../../rules/control-chars";
import { AppError } from "../../errors";
import type { ApiKey, KeyFields, KeyUsageTotals } from "./key-repository";
import { parseZonedTime, ZONED_TIME_EXAMPLE } from "../../rules/time-input";

/** Counts are kept exact: no integer a double cannot hold. */
export const MAX_LIMIT = Number.MAX_SAFE_INTEGER;
/** Balances are stored in millionths of a unit, as integers: the largest and smallest amounts that stay exact. */
export const MAX_BALANCE = Math.floor(Number.MAX_SAFE_INTEGER / 1_000_000);
export const MIN_BALANCE = 0.000001;

/*
 * Plain TypeBox, not Elysia's `t`: Elysia's t.Integer also accepts "5" (it is made for query strings), and a
 * limit must be a JSON number.
 */

/**
 * A limit is a positive bound or null (none). 0 is refused: it would refuse every request, which is what
 * disabling a key says clearly (and the gateway could only answer with a 429 that no wait cures).
 */
const Limit = t.Union([t.Integer({ minimum: 1, maximum: MAX_LIMIT }), t.Null()]);
const Balance = t.Union([t.Number({ minimum: MIN_BALANCE, maximum: MAX_BALANCE }), t.Null()]);
const ModelList = t.Array(t.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 1000 });
/** ISO 8601 with a zone (see time-input.ts); checked by hand for a message that says so. */
const Time = t.Union([t.String({ maxLength: 64 }), t.Null()]);

export const KeyInput = t.Object(
  {
    // No leading space, no control character (it would reach terminals that print key names).
    name: t.Optional(t.String({ minLength: 1, maxLength: 100, pattern: `^[^\\s${CONTROL_CLASS}][^${CONTROL_CLASS}]*$` })),
    status: t.Optional(t.Union([t.Literal("active"), t.Literal("disabled")])),
    notBefore: t.Optional(Time),
    expiresAt: t.Optional(Time),
    allowModels: t.Optional(ModelList),
    denyModels: t.Optional(ModelList),
    /** Clears the model list: every model allowed. */
    allModels: t.Optional(t.Boolean()),
    quotaTokens: t.Optional(Limit),
    balance: t.Optional(Balance),
    rpm: t.Optional(Limit),
    rpd: t.Optional(Limit),
    concurrency: t.Optional(Limit),
    maxTokens: t.Optional(Limit),
    resetUsage: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
);
export type KeyInput = Static<typeof KeyInput>;

type Field = keyof KeyInput;
const FIELDS = Object.keys(KeyInput.properties) as Field[];
const LIMITS = ["quotaTokens", "rpm", "rpd", "concurrency", "maxTokens"] as const;
/** Fields of a key's view that cannot be set: a view sent back as it came is refused with a pointer. */
const VIEW_ONLY = new Set(["id", "prefix", "state", "modelMode", "models", "usage", "createdAt", "updatedAt", "key"]);

/**
 * Who reads the messages: the admin API (JSON field names) or the CLI (its flags). The rules are the same;
 * only the words for a field, "no limit" and "disable" differ.
 */
export type KeyInputSpeaker = "api" | "cli";

const WORDS = {
  api: {
    field: (f: string) => `'${f}'`,
    none: "null",
    disable: "POST /admin/api/keys/{id}/disable",
    allModels: "'allModels': true",
  },
  cli: {
    field: (f: string) => `--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
    none: '"none"',
    disable: "gantry keys disable ID",
    allModels: "--all-models",
  },
} as const;

function problem(param: string, message: string): AppError {
  return new AppError("invalid_request", message, { param });
}

function limitProblem(field: (typeof LIMITS)[number] | "balance", value: unknown, by: KeyInputSpeaker): string {
  const w = WORDS[by];
  const name = w.field(field);
  const what = field === "balance" ? `an amount from ${MIN_BALANCE} to ${MAX_BALANCE}` : `a whole number from 1 to ${MAX_LIMIT}`;
  if (value === 0) {
    return `${name} is 0, which would refuse every request. To block a key, disable it (${w.disable}); for no limit, use ${w.none}.`;
  }
  if (typeof value === "number" && value > (field === "balance" ? MAX_BALANCE : MAX_LIMIT)) {
    return `${name} is ${value}, above the largest supported value; it must be ${what}, or ${w.none} for no limit.`;
  }
  return `${name} must be ${what}, or ${w.none} for no limit; got ${JSON.stringify(value)?.slice(0, 40)}.`;
}

function timeProblem(field: "notBefore" | "expiresAt", by: KeyInputSpeaker): string {
  const w = WORDS[by];
  return `${w.field(field)} must be an ISO 8601 date-time with a time zone (e.g. ${ZONED_TIME_EXAMPLE}), or ${w.none} for no date.`;
}

function fieldProblem(field: Field, value: unknown, by: KeyInputSpeaker): string | null {
  if ((field === "notBefore" || field === "expiresAt") && typeof value === "string" && parseZonedTime(value) === null) {
    return timeProblem(field, by);
  }
  const schema = KeyInput.properties[field];
  if (Value.Check(schema, value)) return null;
  const w = WORDS[by];
  const name = w.field(field);
  switch (field) {
    case "quotaTokens":
    case "rpm":
    case "rpd":
    case "concurrency":
    case "maxTokens":
    case "balance":
      return limitProblem(field, value, by);
    case "allowModels":
    case "denyModels":
      if (Array.isArray(value) && value.length === 0) {
        return field === "allowModels"
          ? `${name} is empty, which would allow no model. To allow every model, use ${w.allModels}.`
          : `${name} is empty, which would deny nothing. To allow every model, use ${w.allModels}.`;
      }
      return `${name} must be a list of 1 to 1000 model ids or * patterns (each 1 to 200 characters).`;
    case "notBefore":
    case "expiresAt":
      return timeProblem(field, by);
    case "name":
      return `${name} must be 1 to 100 characters, may not start with a space and may not contain control characters${typeof value === "string" && firstControl(value) ? ` (it holds ${firstControl(value)})` : ""}.`;
    case "status":
      return `${name} must be one of active, disabled.`;
    default:
      return `${name} must be true or false.`;
  }
}

/**
 * Checks a decoded body (or the CLI's flags as the same object) and returns it typed. Every problem is named in
 * one message; `param` is the first. Unknown fields are refused: a typo (`qota`) or the `limits` object of a
 * key's view would otherwise be dropped without a word and leave the key unlimited.
 */
export function checkKeyInput(value: unknown, by: KeyInputSpeaker = "api"): KeyInput {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new AppError("invalid_request", "The key fields must be a JSON object.");
  }
  const body = value as Record<string, unknown>;
  const problems: Array<[string, string]> = [];
  const unknown = Object.keys(body).filter((k) => !(FIELDS as string[]).includes(k));
  for (const k of unknown) {
    let hint = `Known fields: ${FIELDS.join(", ")}.`;
    if (k === "limits") hint = `It is how a key is shown; to set limits, send ${[...LIMITS, "balance"].join(", ")} at the top level.`;
    else if (VIEW_ONLY.has(k)) hint = "It is part of how a key is shown and cannot be set.";
    problems.push([k, `Unknown field '${k.slice(0, 40)}'. ${hint}`]);
  }
  for (const f of FIELDS) {
    if (!(f in body) || body[f] === undefined) continue;
    const p = fieldProblem(f, body[f], by);
    if (p) problems.push([f, p]);
  }
  if (problems.length === 0) {
    const w = WORDS[by];
    if (body.allowModels !== undefined && body.denyModels !== undefined) {
      problems.push(["allowModels", `A key has either a model whitelist (${w.field("allowModels")}) or a blacklist (${w.field("denyModels")}), not both.`]);
    } else if (body.allModels === true && (body.allowModels !== undefined || body.denyModels !== undefined)) {
      problems.push(["allModels", `${w.allModels} allows every model; it cannot come with ${w.field(body.allowModels !== undefined ? "allowModels" : "denyModels")}.`]);
    }
  }
  if (problems.length > 0) throw problem(problems[0]![0], problems.map(([, m]) => m).join(" "));
  return body as KeyInput;
}

function time(text: string | null | undefined, field: "notBefore" | "expiresAt", by: KeyInputSpeaker): number | null | undefined {
  if (text === undefined || text === null) return text;
  const ms = parseZonedTime(text);
  if (ms === null) throw problem(field, timeProblem(field, by));
  return ms;
}

/**
 * The store's fields from a checked input. `stored` is the key being changed (null on create): a period whose
 * start is not before its end is refused, also when only one side changes and the other is the stored one.
 */
export function keyFieldsFrom(
  input: KeyInput,
  stored: Pick<ApiKey, "notBefore" | "expiresAt"> | null = null,
  by: KeyInputSpeaker = "api",
): KeyFields {
  const notBefore = time(input.notBefore, "notBefore", by);
  const expiresAt = time(input.expiresAt, "expiresAt", by);
  if (notBefore !== undefined || expiresAt !== undefined) {
    const start = notBefore !== undefined ? notBefore : (stored?.notBefore ?? null);
    const end = expiresAt !== undefined ? expiresAt : (stored?.expiresAt ?? null);
    if (start !== null && end !== null && start >= end) {
      const w = WORDS[by];
      const said = (given: boolean) => (given ? "" : " (stored)");
      throw problem(
        notBefore !== undefined ? "notBefore" : "expiresAt",
        `${w.field("notBefore")} ${new Date(start).toISOString()}${said(notBefore !== undefined)} must be earlier than ` +
          `${w.field("expiresAt")} ${new Date(end).toISOString()}${said(expiresAt !== undefined)}: the key would never be valid.`,
      );
    }
  }
  const fields: KeyFields = {
    name: input.name,
    status: input.status,
    notBefore,
    expiresAt,
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
