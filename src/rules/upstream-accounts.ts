/**
 * The upstream accounts setting (`[[upstreams]]` in gantry.toml, or GANTRY_UPSTREAMS as JSON), checked and
 * resolved (pure): every problem is a sentence naming the account and the field, so an operator fixes them in one
 * go. A key is taken inline (`key`) or from the environment variable `key_env` names; either way it is only ever
 * held, never shown (describeAccounts).
 */

/** One account as the settings resolve it (the gateway's UpstreamAccount is built from this). */
export interface UpstreamAccountSetting {
  name: string;
  /** Base URL with its version prefix, no trailing slash. */
  url: string;
  /** The credential, resolved from `key` or `key_env`. */
  apiKey: string;
  /** Where the key came from: an inline key makes the file that holds it a secret (it may not be world-readable). */
  keyInline: boolean;
  models: string[];
  modelMap: Record<string, string>;
  priority: number;
  weight: number;
  maxConcurrency: number | null;
}

const FIELDS = new Set(["name", "url", "key", "key_env", "models", "priority", "weight", "max_concurrency", "model_map"]);
/** Names appear in logs, metric labels, the ledger and Redis keys: short and plain. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const HTTP_URL = /^https?:\/\/[^\s/]+(\/\S*)?$/i;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_INT = 1_000_000;

const isInt = (v: unknown, min: number): v is number => typeof v === "number" && Number.isInteger(v) && v >= min && v <= MAX_INT;

/**
 * Checks and resolves the setting's value (an array of tables). `where` names the source in problems
 * (`gantry.toml`, `GANTRY_UPSTREAMS`); `env` is where `key_env` is looked up.
 */
export function parseUpstreamAccounts(
  value: unknown,
  where: string,
  env: Record<string, string | undefined>,
): { accounts: UpstreamAccountSetting[]; problems: string[] } {
  const problems: string[] = [];
  if (!Array.isArray(value)) return { accounts: [], problems: [`${where}: upstreams must be a list of accounts (an array of tables: [[upstreams]])`] };
  const accounts: UpstreamAccountSetting[] = [];
  const seen = new Set<string>();
  value.forEach((raw, i) => {
    const label0 = `${where}: upstream account #${i + 1}`;
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      problems.push(`${label0} is not a table of fields`);
      return;
    }
    const t = raw as Record<string, unknown>;
    const name = typeof t.name === "string" ? t.name : "";
    const label = NAME.test(name) ? `${where}: upstream account "${name}"` : label0;
    const bad = (field: string, what: string) => problems.push(`${label}: ${field} ${what}`);
    const before = problems.length;
    for (const k of Object.keys(t)) if (!FIELDS.has(k)) bad(k, `is not a field of an account (fields: ${[...FIELDS].join(", ")})`);
    if (!NAME.test(name)) bad("name", "must be 1-64 characters: letters, digits, '_', '.', '-' (starting with a letter or digit)");
    else if (seen.has(name)) bad("name", "is used by another account (names must be unique)");
    seen.add(name);
    const url = typeof t.url === "string" ? t.url.trim() : "";
    if (!HTTP_URL.test(url)) bad("url", "must be an http:// or https:// URL (the base URL with its version prefix)");
    let apiKey = "";
    const keyInline = t.key !== undefined;
    if (t.key !== undefined && t.key_env !== undefined) bad("key", "and key_env are exclusive: give one");
    else if (t.key !== undefined) {
      if (typeof t.key !== "string" || t.key.trim() === "") bad("key", "must be a non-empty string");
      else apiKey = t.key;
    } else if (t.key_env !== undefined) {
      if (typeof t.key_env !== "string" || !ENV_NAME.test(t.key_env)) bad("key_env", "must name an environment variable");
      else {
        const v = env[t.key_env];
        if (v === undefined || v === "") bad("key_env", `names ${t.key_env}, which is not set (or empty) in the environment`);
        else apiKey = v;
      }
    } else bad("key", "is missing: give key_env (the environment variable holding the key) or key");
    let models: string[] = ["*"];
    if (t.models !== undefined) {
      if (!Array.isArray(t.models) || t.models.length === 0 || !t.models.every((m) => typeof m === "string" && m.trim() !== "")) bad("models", 'must be a non-empty list of model names, or ["*"]');
      else models = (t.models as string[]).map((m) => m.trim());
    }
    const modelMap: Record<string, string> = {};
    if (t.model_map !== undefined) {
      const m = t.model_map;
      if (m === null || typeof m !== "object" || Array.isArray(m) || !Object.entries(m).every(([k, v]) => k.trim() !== "" && typeof v === "string" && v.trim() !== "")) {
        bad("model_map", "must be a table of public model name = this account's model id");
      } else for (const [k, v] of Object.entries(m as Record<string, string>)) modelMap[k] = v.trim();
    }
    const priority = t.priority ?? 1;
    if (!isInt(priority, 0)) bad("priority", `must be a whole number from 0 to ${MAX_INT} (lower is tried first)`);
    const weight = t.weight ?? 1;
    if (!isInt(weight, 0)) bad("weight", `must be a whole number from 0 to ${MAX_INT} (0 drains the account)`);
    const maxConcurrency = t.max_concurrency ?? null;
    if (maxConcurrency !== null && !isInt(maxConcurrency, 1)) bad("max_concurrency", `must be a whole number from 1 to ${MAX_INT}`);
    if (problems.length > before) return;
    accounts.push({
      name,
      url: url.replace(/\/+$/, ""),
      apiKey,
      keyInline,
      models,
      modelMap,
      priority: priority as number,
      weight: weight as number,
      maxConcurrency: maxConcurrency as number | null,
    });
  });
  return { accounts, problems };
}

/** The accounts as an operator may see them (the settings line, `describeConfig`): everything but the key. */
export function describeAccounts(accounts: readonly UpstreamAccountSetting[], redactKey: (key: string) => string): unknown[] {
  return accounts.map(({ apiKey, keyInline: _inline, ...rest }) => ({ ...rest, key: redactKey(apiKey) }));
}
