/**
 * Settings: flag > environment > gantry.toml in the data dir > default, validated with TypeBox.
 * The names are a contract with operators (shared/OPERATOR.md); add freely, never rename.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

type Kind = "string" | "int" | "number" | "bool" | "list" | "json";

interface SettingDef {
  key: keyof Config;
  env: string;
  flag: string;
  kind: Kind;
  default: unknown;
  secret?: boolean;
  help: string;
}

const PositiveInt = (opts: { minimum?: number; maximum?: number } = {}) =>
  Type.Integer({ minimum: opts.minimum ?? 0, maximum: opts.maximum ?? Number.MAX_SAFE_INTEGER });

export const ConfigSchema = Type.Object({
  host: Type.String({ minLength: 1 }),
  port: PositiveInt({ maximum: 65535 }),
  dataDir: Type.String({ minLength: 1 }),
  upstreamUrl: Type.Union([Type.Literal(""), Type.String({ pattern: "^https?://[^\\s]+$" })]),
  upstreamKey: Type.String(),
  adminToken: Type.String(),
  publicUrl: Type.Union([Type.Literal(""), Type.String({ pattern: "^https?://[^\\s/]+(/[^\\s]*)?$" })]),
  logLevel: Type.Union([Type.Literal("debug"), Type.Literal("info"), Type.Literal("warn"), Type.Literal("error")]),
  upstreamConnectTimeoutMs: PositiveInt({ minimum: 1 }),
  upstreamFirstByteTimeoutMs: PositiveInt({ minimum: 1 }),
  upstreamIdleTimeoutMs: PositiveInt({ minimum: 1 }),
  upstreamRetries: PositiveInt({ maximum: 10 }),
  keepAliveSeconds: PositiveInt({ minimum: 1, maximum: 3600 }),
  maxBodyBytes: PositiveInt({ minimum: 1024 }),
  defaultInstructions: Type.String(),
  modelOverrides: Type.Record(Type.String(), Type.Object({ reasoningEffort: Type.Optional(Type.String()) })),
  prices: Type.Record(
    Type.String(),
    Type.Object({ input: Type.Number({ minimum: 0 }), output: Type.Number({ minimum: 0 }) }),
  ),
  modelsCacheSeconds: PositiveInt({ maximum: 10 }),
  downloadTokenTtlSeconds: PositiveInt({ minimum: 1 }),
  trustedProxies: Type.Array(Type.String()),
  shutdownGraceSeconds: PositiveInt(),
  tlsCert: Type.String(),
  tlsKey: Type.String(),
  httpRedirectPort: PositiveInt({ maximum: 65535 }),
  hstsMaxAgeSeconds: PositiveInt(),
  syncGithub: Type.String(),
  syncIntervalMinutes: PositiveInt(),
  syncToken: Type.String(),
  syncApiUrl: Type.String({ pattern: "^https?://[^\\s]+$" }),
  syncPrereleases: Type.Boolean(),
  metricsPublic: Type.Boolean(),
});

export type Config = Static<typeof ConfigSchema>;

export const SETTINGS: SettingDef[] = [
  { key: "host", env: "GANTRY_HOST", flag: "host", kind: "string", default: "127.0.0.1", help: "listen address" },
  { key: "port", env: "GANTRY_PORT", flag: "port", kind: "int", default: 8080, help: "listen port" },
  { key: "dataDir", env: "GANTRY_DATA_DIR", flag: "data-dir", kind: "string", default: "./data", help: "SQLite database and asset mirror" },
  { key: "upstreamUrl", env: "GANTRY_UPSTREAM_URL", flag: "upstream-url", kind: "string", default: "", help: "upstream base URL including its version prefix, e.g. https://api.openai.com/v1" },
  { key: "upstreamKey", env: "GANTRY_UPSTREAM_KEY", flag: "upstream-key", kind: "string", default: "", secret: true, help: "bearer credential for the upstream" },
  { key: "adminToken", env: "GANTRY_ADMIN_TOKEN", flag: "admin-token", kind: "string", default: "", secret: true, help: "admin bearer token (generated on first start when unset)" },
  { key: "publicUrl", env: "GANTRY_PUBLIC_URL", flag: "public-url", kind: "string", default: "", help: "fixed external base URL for generated links" },
  { key: "logLevel", env: "GANTRY_LOG_LEVEL", flag: "log-level", kind: "string", default: "info", help: "debug, info, warn, error" },
  { key: "upstreamConnectTimeoutMs", env: "GANTRY_UPSTREAM_CONNECT_TIMEOUT_MS", flag: "upstream-connect-timeout-ms", kind: "int", default: 10_000, help: "time allowed to connect to the upstream" },
  { key: "upstreamFirstByteTimeoutMs", env: "GANTRY_UPSTREAM_FIRST_BYTE_TIMEOUT_MS", flag: "upstream-first-byte-timeout-ms", kind: "int", default: 120_000, help: "time allowed until the upstream's response headers arrive" },
  { key: "upstreamIdleTimeoutMs", env: "GANTRY_UPSTREAM_IDLE_TIMEOUT_MS", flag: "upstream-idle-timeout-ms", kind: "int", default: 600_000, help: "a streaming upstream silent this long is cut (keep-alives keep the caller's side open meanwhile)" },
  { key: "upstreamRetries", env: "GANTRY_UPSTREAM_RETRIES", flag: "upstream-retries", kind: "int", default: 0, help: "retries of upstream failures before any byte reached the caller" },
  { key: "keepAliveSeconds", env: "GANTRY_KEEPALIVE_SECONDS", flag: "keepalive-seconds", kind: "int", default: 15, help: "interval of SSE keep-alive comments on silent streams" },
  { key: "maxBodyBytes", env: "GANTRY_MAX_BODY_BYTES", flag: "max-body-bytes", kind: "int", default: 16 * 1024 * 1024, help: "largest accepted request body" },
  { key: "defaultInstructions", env: "GANTRY_DEFAULT_INSTRUCTIONS", flag: "default-instructions", kind: "string", default: "You are a helpful assistant.", help: "instructions sent when a request has none" },
  { key: "modelOverrides", env: "GANTRY_MODEL_OVERRIDES", flag: "model-overrides", kind: "json", default: { "gpt-5.4": { reasoningEffort: "xhigh" } }, help: 'per-model forced settings, JSON: {"gpt-5.4":{"reasoningEffort":"xhigh"}}' },
  { key: "prices", env: "GANTRY_PRICES", flag: "prices", kind: "json", default: {}, help: 'price per million tokens by model id or glob, JSON: {"gpt-5*":{"input":1.25,"output":10}}' },
  { key: "modelsCacheSeconds", env: "GANTRY_MODELS_CACHE_SECONDS", flag: "models-cache-seconds", kind: "int", default: 10, help: "how long the upstream model list is cached (at most 10)" },
  { key: "downloadTokenTtlSeconds", env: "GANTRY_DOWNLOAD_TOKEN_TTL_SECONDS", flag: "download-token-ttl-seconds", kind: "int", default: 600, help: "lifetime of a /dl/ download link" },
  { key: "trustedProxies", env: "GANTRY_TRUSTED_PROXIES", flag: "trusted-proxies", kind: "list", default: [], help: "comma-separated proxy addresses whose X-Forwarded-* headers count" },
  { key: "shutdownGraceSeconds", env: "GANTRY_SHUTDOWN_GRACE_SECONDS", flag: "shutdown-grace-seconds", kind: "int", default: 30, help: "how long SIGTERM waits for in-flight requests" },
  { key: "tlsCert", env: "GANTRY_TLS_CERT", flag: "tls-cert", kind: "string", default: "", help: "PEM certificate (chain) file: serve HTTPS; reloaded when the file changes or on SIGHUP" },
  { key: "tlsKey", env: "GANTRY_TLS_KEY", flag: "tls-key", kind: "string", default: "", help: "PEM private key file for --tls-cert" },
  { key: "httpRedirectPort", env: "GANTRY_HTTP_REDIRECT_PORT", flag: "http-redirect-port", kind: "int", default: 0, help: "with TLS: a plain-HTTP port that only redirects to HTTPS (0 = none)" },
  { key: "hstsMaxAgeSeconds", env: "GANTRY_HSTS_MAX_AGE_SECONDS", flag: "hsts-max-age-seconds", kind: "int", default: 31_536_000, help: "Strict-Transport-Security max-age on HTTPS replies (0 = no header)" },
  { key: "syncGithub", env: "GANTRY_SYNC_GITHUB", flag: "sync-github", kind: "string", default: "", help: "OWNER/REPO synced periodically from GitHub Releases" },
  { key: "syncIntervalMinutes", env: "GANTRY_SYNC_INTERVAL_MINUTES", flag: "sync-interval-minutes", kind: "int", default: 0, help: "minutes between periodic syncs (0 = off)" },
  { key: "syncToken", env: "GANTRY_SYNC_TOKEN", flag: "sync-token", kind: "string", default: "", secret: true, help: "GitHub token for sync" },
  { key: "syncApiUrl", env: "GANTRY_SYNC_API_URL", flag: "sync-api-url", kind: "string", default: "https://api.github.com", help: "GitHub (or compatible) API base URL for periodic sync" },
  { key: "syncPrereleases", env: "GANTRY_SYNC_PRERELEASES", flag: "sync-prereleases", kind: "bool", default: false, help: "periodic sync also mirrors pre-releases" },
  { key: "metricsPublic", env: "GANTRY_METRICS_PUBLIC", flag: "metrics-public", kind: "bool", default: false, help: "serve GET /metrics without the admin token (for a scraper on a private network)" },
];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid settings:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

function convert(def: SettingDef, raw: unknown, source: string): { value?: unknown; problem?: string } {
  const where = `${def.env} / --${def.flag} (from ${source})`;
  if (typeof raw !== "string") {
    // Values from gantry.toml arrive typed already; lists may come as arrays.
    if (def.kind === "list" && Array.isArray(raw)) return { value: raw.map(String) };
    return { value: raw };
  }
  switch (def.kind) {
    case "string":
      return { value: raw };
    case "int":
    case "number": {
      const n = Number(raw.trim());
      if (raw.trim() === "" || !Number.isFinite(n)) return { problem: `${where}: "${raw}" is not a number` };
      return { value: n };
    }
    case "bool":
      if (/^(1|true|yes|on)$/i.test(raw)) return { value: true };
      if (/^(0|false|no|off)$/i.test(raw)) return { value: false };
      return { problem: `${where}: "${raw}" is not a boolean` };
    case "list":
      return { value: raw.split(",").map((s) => s.trim()).filter(Boolean) };
    case "json":
      try {
        return { value: JSON.parse(raw) };
      } catch {
        return { problem: `${where}: not valid JSON` };
      }
  }
}

function tomlKey(def: SettingDef): string {
  return def.flag.replaceAll("-", "_");
}

function readToml(dataDir: string): Record<string, unknown> {
  const path = join(dataDir, "gantry.toml");
  if (!existsSync(path)) return {};
  try {
    return Bun.TOML.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError([`${path}: ${(err as Error).message}`]);
  }
}

/**
 * Resolves every setting. `flags` holds parsed command-line values keyed by flag name (strings, as typed).
 * Throws ConfigError listing every problem at once, so an operator fixes them in one go.
 */
export function loadConfig(
  flags: Record<string, unknown> = {},
  env: Record<string, string | undefined> = process.env,
): Config {
  const problems: string[] = [];
  const pick = (def: SettingDef, toml: Record<string, unknown>): [unknown, string] | undefined => {
    if (flags[def.flag] !== undefined) return [flags[def.flag], "flag"];
    if (env[def.env] !== undefined && env[def.env] !== "") return [env[def.env], "environment"];
    const t = toml[tomlKey(def)] ?? toml[def.flag];
    if (t !== undefined) return [t, "gantry.toml"];
    return undefined;
  };

  const dataDirDef = SETTINGS.find((s) => s.key === "dataDir")!;
  const dataDir = String(pick(dataDirDef, {})?.[0] ?? dataDirDef.default);
  const toml = readToml(dataDir);
  const known = new Set(SETTINGS.flatMap((s) => [tomlKey(s), s.flag]));
  for (const k of Object.keys(toml)) if (!known.has(k)) problems.push(`gantry.toml: unknown setting "${k}"`);

  const out: Record<string, unknown> = {};
  for (const def of SETTINGS) {
    const found = pick(def, toml);
    if (!found) {
      out[def.key] = structuredClone(def.default);
      continue;
    }
    const { value, problem } = convert(def, found[0], found[1]);
    if (problem) problems.push(problem);
    else out[def.key] = value;
  }

  if (problems.length === 0 && !Value.Check(ConfigSchema, out)) {
    for (const e of Value.Errors(ConfigSchema, out)) {
      const key = e.path.split("/")[1] as keyof Config;
      const def = SETTINGS.find((s) => s.key === key);
      const name = def ? `${def.env} / --${def.flag}` : e.path;
      problems.push(`${name}: ${e.message} (got ${JSON.stringify(e.value)})`);
    }
  }
  if (problems.length === 0 && Boolean(out.tlsCert) !== Boolean(out.tlsKey)) {
    problems.push("GANTRY_TLS_CERT / --tls-cert and GANTRY_TLS_KEY / --tls-key go together: set both or neither");
  }
  if (problems.length === 0 && out.httpRedirectPort && !out.tlsCert) {
    problems.push("GANTRY_HTTP_REDIRECT_PORT / --http-redirect-port needs TLS (--tls-cert and --tls-key)");
  }
  if (problems.length) throw new ConfigError(problems);
  const config = out as Config;
  config.upstreamUrl = config.upstreamUrl.replace(/\/+$/, "");
  config.publicUrl = config.publicUrl.replace(/\/+$/, "");
  return config;
}

/** A secret's printable form: enough to recognise which one it is, never enough to use it. */
export function redact(secret: string): string {
  if (!secret) return "";
  if (secret.length <= 12) return "***";
  return `${secret.slice(0, 6)}…(${secret.length} chars)`;
}

/** The settings as an operator may see them, with every secret redacted. */
export function describeConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const def of SETTINGS) {
    const v = config[def.key];
    out[def.key] = def.secret && typeof v === "string" ? redact(v) : v;
  }
  return out;
}

/** Defaults, for tests and for embedding. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  const out: Record<string, unknown> = {};
  for (const def of SETTINGS) out[def.key] = structuredClone(def.default);
  return { ...(out as Config), ...overrides };
}
