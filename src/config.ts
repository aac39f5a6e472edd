/**
 * Settings: flag > environment > gantry.toml in the data dir > default, each checked on its own so a problem
 * reads as a sentence that names the setting and what it accepts.
 * The names are a contract with operators (shared/OPERATOR.md); add freely, never rename.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseIp, parseProxyRange } from "./rules/ip-ranges";
import { isPublicKeySetting } from "./minisign-key";
import { redact, redactUrlCredentials, redactUrlPassword } from "./redact";
import { describeAccounts, parseUpstreamAccounts, type UpstreamAccountSetting } from "./rules/upstream-accounts";

type Kind = "string" | "int" | "number" | "bool" | "list" | "json";

interface SettingDef {
  key: keyof Config;
  env: string;
  flag: string;
  kind: Kind;
  default: unknown;
  /** true: the whole value is a secret; "url": only the URL's credentials are (the host stays readable). */
  secret?: boolean | "url";
  help: string;
  /** What the setting accepts, in words: a problem reads "<setting>: '<value>' is not <accepts>". */
  accepts?: string;
  /** Whether a converted value is acceptable (ints: whole number in [min, max]); unset = any value of the kind. */
  valid?: (value: any) => boolean;
  /** For a list: whether one entry is acceptable (`accepts` then describes one entry). */
  validEntry?: (entry: string) => boolean;
  /** For JSON: the shape the parsed value must have. */
  schema?: TSchema;
  /** For JSON: what is wrong with each entry of a well-shaped value, one sentence each naming the entry. */
  entryProblems?: (value: any) => string[];
  /** For JSON: checks and converts the parsed value itself (problems name what is wrong inside it). */
  convert?: (value: unknown, label: string, env: Record<string, string | undefined>) => { value?: unknown; problems?: string[] };
  /** How the value is shown to an operator when it holds secrets inside (describeConfig). */
  describe?: (value: any) => unknown;
}

const PositiveInt = (opts: { minimum?: number; maximum?: number } = {}) =>
  Type.Integer({ minimum: opts.minimum ?? 0, maximum: opts.maximum ?? Number.MAX_SAFE_INTEGER });

const ModelOverrides = Type.Record(Type.String(), Type.Object({ reasoningEffort: Type.Optional(Type.String()) }));
const Prices = Type.Record(
  Type.String(),
  Type.Object({ input: Type.Number({ minimum: 0 }), output: Type.Number({ minimum: 0 }) }),
);

const ModelAliases = Type.Record(Type.String(), Type.String());

/**
 * The rule of GANTRY_MODEL_ALIASES' entries, kept with the setting (the gateway's matcher,
 * gateway/translate/model-aliases.ts, reads the table it allows): a name is a model name as the gateway takes one
 * (gateway/limits/rules/model-match.ts: ASCII letters, digits and `. _ - : / @ +`, at most 256 characters) in
 * which `*` stands for any run of characters; a target is a model name without `*`. Names are compared in lower
 * case, as the key's model lists are, so two that differ only in case are the same name written twice.
 */
export function modelAliasProblems(table: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const [name, target] of Object.entries(table)) {
    if (!/^[A-Za-z0-9._:/@+*-]{1,256}$/.test(name)) problems.push(`the name ${JSON.stringify(name)} is not a model name (ASCII letters, digits, . _ - : / @ +, and * for any characters; at most 256)`);
    if (typeof target !== "string" || !/^[A-Za-z0-9._:/@+-]{1,256}$/.test(target) || /(^|\/)(\.{1,2})?(\/|$)/.test(target)) {
      problems.push(`the target of ${JSON.stringify(name)}, ${JSON.stringify(target)}, is not a model name (ASCII letters, digits, . _ - : / @ +; no *)`);
    }
    const other = seen.get(name.toLowerCase());
    if (other !== undefined) problems.push(`${JSON.stringify(name)} and ${JSON.stringify(other)} are the same name (names are compared in lower case)`);
    seen.set(name.toLowerCase(), name);
  }
  return problems;
}

/** The shape of a resolved configuration. Settings are checked one by one (see SETTINGS) so problems read as sentences. */
/**
 * What GANTRY_UPSTREAM_DROP_PARAMS may not name: what a request cannot do without. Part of the setting's rule, so it
 * is kept here; the gateway reads it too (an upstream claiming not to support one of these is not answered by
 * dropping it, gateway/upstream/unsupported-params.ts).
 */
export const NEVER_DROPPED_PARAMS: readonly string[] = ["model", "input", "stream", "store", "instructions", "tools", "tool_choice", "include"];

export const ConfigSchema = Type.Object({
  host: Type.String({ minLength: 1 }),
  port: PositiveInt({ maximum: 65535 }),
  dataDir: Type.String({ minLength: 1 }),
  databaseUrl: Type.String(),
  redisUrl: Type.String(),
  redisLeaseSeconds: PositiveInt(),
  redisFailOpen: Type.Boolean(),
  s3Bucket: Type.String(),
  s3Endpoint: Type.String(),
  s3Region: Type.String(),
  s3AccessKeyId: Type.String(),
  s3SecretAccessKey: Type.String(),
  s3RedirectDownloads: Type.Boolean(),
  upstreamUrl: Type.Union([Type.Literal(""), Type.String({ pattern: "^https?://[^\\s]+$" })]),
  upstreamKey: Type.String(),
  upstreams: Type.Array(
    Type.Object({
      name: Type.String(),
      url: Type.String(),
      apiKey: Type.String(),
      keyInline: Type.Boolean(),
      models: Type.Array(Type.String()),
      modelMap: Type.Record(Type.String(), Type.String()),
      priority: Type.Integer(),
      weight: Type.Integer(),
      maxConcurrency: Type.Union([Type.Integer(), Type.Null()]),
    }),
  ),
  adminToken: Type.String(),
  publicUrl: Type.Union([Type.Literal(""), Type.String({ pattern: "^https?://[^\\s/]+(/[^\\s]*)?$" })]),
  logLevel: Type.Union([Type.Literal("debug"), Type.Literal("info"), Type.Literal("warn"), Type.Literal("error")]),
  logFormat: Type.Union([Type.Literal("auto"), Type.Literal("json"), Type.Literal("text")]),
  upstreamConnectTimeoutMs: PositiveInt({ minimum: 1 }),
  upstreamFirstByteTimeoutMs: PositiveInt({ minimum: 1 }),
  upstreamIdleTimeoutMs: PositiveInt({ minimum: 1 }),
  upstreamRetries: PositiveInt({ maximum: 10 }),
  upstreamDropParams: Type.Array(Type.String()),
  storedResponsesDays: PositiveInt({ maximum: 3650 }),
  storedResponsesPerKey: PositiveInt(),
  storedBytesPerKey: PositiveInt(),
  maxInputItems: PositiveInt({ minimum: 1 }),
  keepAliveSeconds: PositiveInt({ minimum: 1, maximum: 3600 }),
  idleTimeoutSeconds: PositiveInt({ minimum: 1, maximum: 255 }),
  writeStallSeconds: PositiveInt({ minimum: 1, maximum: 3600 }),
  maxConnectionsPerAddress: PositiveInt({ maximum: 1_000_000 }),
  maxBodyBytes: PositiveInt({ minimum: 1024 }),
  maxUpstreamEventBytes: PositiveInt({ minimum: 65536 }),
  defaultInstructions: Type.String(),
  modelOverrides: ModelOverrides,
  prices: Prices,
  modelAliases: ModelAliases,
  modelsCacheSeconds: PositiveInt({ maximum: 10 }),
  downloadTokenTtlSeconds: PositiveInt({ minimum: 1 }),
  downloadMintRpm: PositiveInt(),
  heartbeatRpm: PositiveInt(),
  heartbeatClientsPerHour: PositiveInt(),
  storageReserveMb: PositiveInt(),
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
  allowedFetchHosts: Type.Array(Type.String()),
  corsOrigins: Type.Array(Type.String()),
  releasePublicKey: Type.String(),
});

export type Config = Static<typeof ConfigSchema>;

/** A whole number in [min, max]. */
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => (v: unknown) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
const httpUrl = (v: unknown) => typeof v === "string" && /^https?:\/\/[^\s/]+(\/\S*)?$/i.test(v);
const httpUrlOrEmpty = (v: unknown) => v === "" || httpUrl(v);
const postgresUrlOrEmpty = (v: unknown) => v === "" || (typeof v === "string" && /^postgres(ql)?:\/\/\S+$/i.test(v));
const redisUrlOrEmpty = (v: unknown) => v === "" || (typeof v === "string" && /^rediss?:\/\/\S+$/i.test(v));
const s3BucketOrEmpty = (v: unknown) => v === "" || (typeof v === "string" && /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(v));
const nonEmpty = (v: unknown) => typeof v === "string" && v.trim() !== "";
const LOG_LEVELS = ["debug", "info", "warn", "error"];
const LOG_FORMATS = ["auto", "json", "text"];
const PORT = "a port number (0–65535; 0 picks a free port)";
const URL_WORDS = "an http:// or https:// URL";

export const SETTINGS: SettingDef[] = [
  { key: "host", env: "GANTRY_HOST", flag: "host", kind: "string", default: "127.0.0.1", help: "listen address", accepts: "a host name or IP address", valid: nonEmpty },
  { key: "port", env: "GANTRY_PORT", flag: "port", kind: "int", default: 8080, help: "listen port", accepts: PORT, valid: int(0, 65535) },
  { key: "dataDir", env: "GANTRY_DATA_DIR", flag: "data-dir", kind: "string", default: "./data", help: "SQLite database and asset mirror", accepts: "a directory path", valid: nonEmpty },
  { key: "databaseUrl", env: "GANTRY_DATABASE_URL", flag: "database-url", kind: "string", default: "", secret: "url", help: "PostgreSQL for every record (empty: SQLite in the data dir)", accepts: "a postgres:// URL", valid: postgresUrlOrEmpty },
  { key: "redisUrl", env: "GANTRY_REDIS_URL", flag: "redis-url", kind: "string", default: "", secret: "url", help: "Redis for rate buckets, concurrency leases and quota reservations shared by instances (empty: in-process)", accepts: "a redis:// or rediss:// URL", valid: redisUrlOrEmpty },
  { key: "redisLeaseSeconds", env: "GANTRY_REDIS_LEASE_SECONDS", flag: "redis-lease-seconds", kind: "int", default: 30, help: "a request's concurrency slot and quota reservation in Redis expire this long after its instance stopped renewing them (an instance that died gives them back)", accepts: "a whole number of seconds, 3 to 3600", valid: int(3, 3600) },
  { key: "redisFailOpen", env: "GANTRY_REDIS_FAIL_OPEN", flag: "redis-fail-open", kind: "bool", default: false, help: "while Redis is unreachable, admit requests against this instance's share of each limit (the limit divided by the instances last seen) instead of answering 503; at start Redis must answer all the same (a wrong URL or password is not an outage)", accepts: "true or false" },
  { key: "s3Bucket", env: "GANTRY_S3_BUCKET", flag: "s3-bucket", kind: "string", default: "", help: "asset bytes in this S3 bucket (empty: the file-system mirror in the data dir)", accepts: "an S3 bucket name (3-63 characters: a-z, 0-9, '.', '-')", valid: s3BucketOrEmpty },
  { key: "s3Endpoint", env: "GANTRY_S3_ENDPOINT", flag: "s3-endpoint", kind: "string", default: "", help: "the S3 service's URL (empty: AWS S3 of the region)", accepts: URL_WORDS, valid: httpUrlOrEmpty },
  { key: "s3Region", env: "GANTRY_S3_REGION", flag: "s3-region", kind: "string", default: "us-east-1", help: "the bucket's region (most S3-compatible servers accept any)", accepts: "a region name", valid: nonEmpty },
  { key: "s3AccessKeyId", env: "GANTRY_S3_ACCESS_KEY_ID", flag: "s3-access-key-id", kind: "string", default: "", help: "S3 access key id", accepts: "an access key id" },
  { key: "s3SecretAccessKey", env: "GANTRY_S3_SECRET_ACCESS_KEY", flag: "s3-secret-access-key", kind: "string", default: "", secret: true, help: "S3 secret access key", accepts: "a secret access key" },
  { key: "s3RedirectDownloads", env: "GANTRY_S3_REDIRECT_DOWNLOADS", flag: "s3-redirect-downloads", kind: "bool", default: true, help: "with an S3 bucket: answer a complete /dl/ download with a redirect to a presigned S3 URL (5 minutes) that carries Gantry's download headers; false streams every download through Gantry (for a bucket clients cannot reach)", accepts: "true or false" },
  { key: "upstreamUrl", env: "GANTRY_UPSTREAM_URL", flag: "upstream-url", kind: "string", default: "", help: "upstream base URL including its version prefix, e.g. https://api.openai.com/v1", accepts: URL_WORDS, valid: httpUrlOrEmpty },
  { key: "upstreamKey", env: "GANTRY_UPSTREAM_KEY", flag: "upstream-key", kind: "string", default: "", secret: true, help: "bearer credential for the upstream" },
  {
    key: "upstreams",
    env: "GANTRY_UPSTREAMS",
    flag: "upstreams",
    kind: "json",
    default: [],
    help: "upstream accounts as a JSON array (in gantry.toml: [[upstreams]] tables) of {name, url, key or key_env, models, priority, weight, max_concurrency, model_map}; exclusive with --upstream-url/--upstream-key, which are a pool of one named default",
    accepts: "a list of upstream accounts",
    convert: (value, label, env) => {
      const r = parseUpstreamAccounts(value, label, env);
      return r.problems.length ? { problems: r.problems } : { value: r.accounts };
    },
    describe: (accounts: UpstreamAccountSetting[]) => describeAccounts(accounts, redact),
  },
  { key: "adminToken", env: "GANTRY_ADMIN_TOKEN", flag: "admin-token", kind: "string", default: "", secret: true, help: "admin bearer token (generated on first start when unset)" },
  { key: "publicUrl", env: "GANTRY_PUBLIC_URL", flag: "public-url", kind: "string", default: "", help: "fixed external base URL for generated links", accepts: URL_WORDS, valid: httpUrlOrEmpty },
  { key: "logLevel", env: "GANTRY_LOG_LEVEL", flag: "log-level", kind: "string", default: "info", help: "debug, info, warn, error", accepts: `one of ${LOG_LEVELS.join(", ")}`, valid: (v) => LOG_LEVELS.includes(v) },
  { key: "logFormat", env: "GANTRY_LOG_FORMAT", flag: "log-format", kind: "string", default: "auto", help: "json (one JSON object a line), text (short readable lines), or auto: text on a terminal and in the demo, JSON otherwise", accepts: `one of ${LOG_FORMATS.join(", ")}`, valid: (v) => LOG_FORMATS.includes(v) },
  { key: "upstreamConnectTimeoutMs", env: "GANTRY_UPSTREAM_CONNECT_TIMEOUT_MS", flag: "upstream-connect-timeout-ms", kind: "int", default: 10_000, help: "time allowed to connect to the upstream", accepts: "a whole number of milliseconds, at least 1", valid: int(1) },
  { key: "upstreamFirstByteTimeoutMs", env: "GANTRY_UPSTREAM_FIRST_BYTE_TIMEOUT_MS", flag: "upstream-first-byte-timeout-ms", kind: "int", default: 120_000, help: "time allowed until the upstream's response headers arrive", accepts: "a whole number of milliseconds, at least 1", valid: int(1) },
  { key: "upstreamIdleTimeoutMs", env: "GANTRY_UPSTREAM_IDLE_TIMEOUT_MS", flag: "upstream-idle-timeout-ms", kind: "int", default: 600_000, help: "a streaming upstream silent this long is cut (keep-alives keep the caller's side open meanwhile)", accepts: "a whole number of milliseconds, at least 1", valid: int(1) },
  { key: "storedResponsesDays", env: "GANTRY_STORED_RESPONSES_DAYS", flag: "stored-responses-days", kind: "int", default: 30, help: "days a /v1/responses call made with store not false is kept for previous_response_id, item_reference and GET /v1/responses/{id} (0: nothing is kept)", accepts: "a whole number of days from 0 to 3650", valid: int(0, 3650) },
  { key: "storedResponsesPerKey", env: "GANTRY_STORED_RESPONSES_PER_KEY", flag: "stored-responses-per-key", kind: "int", default: 20_000, help: "most responses one API key keeps; past it the key's oldest go first (its newest is always kept; 0: no limit)", accepts: "a whole number of responses, at least 0", valid: int(0) },
  { key: "storedBytesPerKey", env: "GANTRY_STORED_BYTES_PER_KEY", flag: "stored-bytes-per-key", kind: "int", default: 512 * 1024 * 1024, help: "most bytes of kept responses one API key keeps; past it the key's oldest go first (its newest is always kept; 0: no limit)", accepts: "a whole number of bytes, at least 0", valid: int(0) },
  { key: "upstreamDropParams", env: "GANTRY_UPSTREAM_DROP_PARAMS", flag: "upstream-drop-params", kind: "list", default: [], help: "comma-separated request parameters never sent upstream (others it refuses as unsupported are learnt and dropped by themselves)", accepts: `a top-level Responses parameter name such as temperature or top_p (not ${NEVER_DROPPED_PARAMS.join(", ")})`, validEntry: (e) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(e) && !NEVER_DROPPED_PARAMS.includes(e) },
  { key: "upstreamRetries", env: "GANTRY_UPSTREAM_RETRIES", flag: "upstream-retries", kind: "int", default: 0, help: "retries of upstream failures before any byte reached the caller", accepts: "a whole number from 0 to 10", valid: int(0, 10) },
  { key: "idleTimeoutSeconds", env: "GANTRY_IDLE_TIMEOUT_SECONDS", flag: "idle-timeout-seconds", kind: "int", default: 60, help: "seconds a connection may send nothing before it is closed (a partial request, an idle kept-alive connection); admitted streams, collected calls and downloads are not cut", accepts: "a whole number of seconds from 1 to 255", valid: int(1, 255) },
  { key: "writeStallSeconds", env: "GANTRY_WRITE_STALL_SECONDS", flag: "write-stall-seconds", kind: "int", default: 30, help: "longest a streamed reply may wait for a caller that stopped reading; then its upstream is aborted, its lease freed and the call settled as caller_stalled", accepts: "a whole number of seconds from 1 to 3600", valid: int(1, 3600) },
  { key: "maxConnectionsPerAddress", env: "GANTRY_MAX_CONNECTIONS_PER_ADDRESS", flag: "max-connections-per-address", kind: "int", default: 256, help: "most connections one client address may hold (an IPv6 client: its /64); its newest beyond that are closed within a second; trusted proxies are not capped (0: no cap)", accepts: "a whole number from 0 to 1000000", valid: int(0, 1_000_000) },
  { key: "keepAliveSeconds", env: "GANTRY_KEEPALIVE_SECONDS", flag: "keepalive-seconds", kind: "int", default: 15, help: "interval of SSE keep-alive comments on silent streams", accepts: "a whole number of seconds from 1 to 3600", valid: int(1, 3600) },
  { key: "maxInputItems", env: "GANTRY_MAX_INPUT_ITEMS", flag: "max-input-items", kind: "int", default: 10_000, help: "most input items (Responses) or messages (chat) one request may carry, and most items a continued conversation may send upstream (400 above)", accepts: "a whole number of items, at least 1", valid: int(1) },
  { key: "maxBodyBytes", env: "GANTRY_MAX_BODY_BYTES", flag: "max-body-bytes", kind: "int", default: 16 * 1024 * 1024, help: "largest accepted request body", accepts: "a whole number of bytes, at least 1024", valid: int(1024) },
  { key: "maxUpstreamEventBytes", env: "GANTRY_MAX_UPSTREAM_EVENT_BYTES", flag: "max-upstream-event-bytes", kind: "int", default: 8 * 1024 * 1024, help: "largest single event (or line) read from the upstream's stream; a larger one ends the request with an in-band error", accepts: "a whole number of bytes, at least 65536", valid: int(65536) },
  { key: "defaultInstructions", env: "GANTRY_DEFAULT_INSTRUCTIONS", flag: "default-instructions", kind: "string", default: "You are a helpful assistant.", help: "instructions sent when a request has none (or only blank ones)", accepts: "text that is not blank (the upstream refuses empty instructions)", valid: nonEmpty },
  { key: "modelOverrides", env: "GANTRY_MODEL_OVERRIDES", flag: "model-overrides", kind: "json", default: { "gpt-5.4": { reasoningEffort: "xhigh" } }, help: 'per-model forced settings, JSON: {"gpt-5.4":{"reasoningEffort":"xhigh"}}', accepts: 'a JSON object of settings per model id, e.g. {"gpt-5.4":{"reasoningEffort":"xhigh"}}', schema: ModelOverrides },
  { key: "prices", env: "GANTRY_PRICES", flag: "prices", kind: "json", default: {}, help: 'price per million tokens by model id or glob, JSON: {"gpt-5*":{"input":1.25,"output":10}}', accepts: 'a JSON object of {"input": N, "output": N} prices (at least 0) per model id or glob, e.g. {"gpt-5*":{"input":1.25,"output":10}}', schema: Prices },
  { key: "modelAliases", env: "GANTRY_MODEL_ALIASES", flag: "model-aliases", kind: "json", default: {}, help: 'model names callers send mapped to the upstream model that serves them, JSON; * matches any characters; an exact name wins, then the longest pattern: {"claude-opus-*":"gpt-5.4","claude-sonnet-*":"gpt-5.2"}', accepts: 'a JSON object of model name (or pattern with *) to upstream model name, e.g. {"claude-sonnet-*":"gpt-5.2"}', schema: Type.Record(Type.String(), Type.Unknown()), entryProblems: modelAliasProblems },
  { key: "modelsCacheSeconds", env: "GANTRY_MODELS_CACHE_SECONDS", flag: "models-cache-seconds", kind: "int", default: 10, help: "how long the upstream model list is cached (at most 10)", accepts: "a whole number of seconds from 0 to 10", valid: int(0, 10) },
  { key: "downloadTokenTtlSeconds", env: "GANTRY_DOWNLOAD_TOKEN_TTL_SECONDS", flag: "download-token-ttl-seconds", kind: "int", default: 600, help: "lifetime of a /dl/ download link", accepts: "a whole number of seconds, at least 1", valid: int(1) },
  { key: "downloadMintRpm", env: "GANTRY_DOWNLOAD_MINT_RPM", flag: "download-mint-rpm", kind: "int", default: 120, help: "download links one client address may request per minute from /api/v1/download/ (0 = no limit)", accepts: "a whole number of links per minute, at least 0", valid: int(0) },
  { key: "heartbeatRpm", env: "GANTRY_HEARTBEAT_RPM", flag: "heartbeat-rpm", kind: "int", default: 600, help: "heartbeats one client address may send per minute (0 = no limit)", accepts: "a whole number of heartbeats per minute, at least 0", valid: int(0) },
  { key: "heartbeatClientsPerHour", env: "GANTRY_HEARTBEAT_CLIENTS_PER_HOUR", flag: "heartbeat-clients-per-hour", kind: "int", default: 500, help: "different client ids one client address may send heartbeats for per hour; a further new id gets 429 (0 = no limit)", accepts: "a whole number of client ids per hour, at least 0", valid: int(0) },
  { key: "storageReserveMb", env: "GANTRY_STORAGE_RESERVE_MB", flag: "storage-reserve-mb", kind: "int", default: 256, help: "free space (MiB) on the data dir's file system kept for billing: below it heartbeats and download counts are refused or skipped while the ledger goes on writing (0 = no reserve; not used with GANTRY_DATABASE_URL)", accepts: "a whole number of MiB, at least 0", valid: int(0) },
  { key: "trustedProxies", env: "GANTRY_TRUSTED_PROXIES", flag: "trusted-proxies", kind: "list", default: [], help: "comma-separated proxy addresses or CIDR ranges whose X-Forwarded-* headers count", accepts: "an IP address or CIDR range (e.g. 10.0.0.1, 10.0.0.0/8, ::1, fd00::/8)", validEntry: (e) => parseProxyRange(e) !== null },
  { key: "shutdownGraceSeconds", env: "GANTRY_SHUTDOWN_GRACE_SECONDS", flag: "shutdown-grace-seconds", kind: "int", default: 30, help: "how long SIGTERM waits for in-flight requests", accepts: "a whole number of seconds, at least 0", valid: int(0) },
  { key: "tlsCert", env: "GANTRY_TLS_CERT", flag: "tls-cert", kind: "string", default: "", help: "PEM certificate (chain) file: serve HTTPS; reloaded when the file changes or on SIGHUP" },
  { key: "tlsKey", env: "GANTRY_TLS_KEY", flag: "tls-key", kind: "string", default: "", help: "PEM private key file for --tls-cert" },
  { key: "httpRedirectPort", env: "GANTRY_HTTP_REDIRECT_PORT", flag: "http-redirect-port", kind: "int", default: 0, help: "with TLS: a plain-HTTP port that only redirects to HTTPS (0 = none)", accepts: "a port number (0–65535; 0 = none)", valid: int(0, 65535) },
  { key: "hstsMaxAgeSeconds", env: "GANTRY_HSTS_MAX_AGE_SECONDS", flag: "hsts-max-age-seconds", kind: "int", default: 31_536_000, help: "Strict-Transport-Security max-age on HTTPS replies (0 = no header)", accepts: "a whole number of seconds, at least 0", valid: int(0) },
  { key: "syncGithub", env: "GANTRY_SYNC_GITHUB", flag: "sync-github", kind: "string", default: "", help: "OWNER/REPO synced periodically from GitHub Releases" },
  { key: "syncIntervalMinutes", env: "GANTRY_SYNC_INTERVAL_MINUTES", flag: "sync-interval-minutes", kind: "int", default: 0, help: "minutes between periodic syncs (0 = off)", accepts: "a whole number of minutes, at least 0", valid: int(0) },
  { key: "syncToken", env: "GANTRY_SYNC_TOKEN", flag: "sync-token", kind: "string", default: "", secret: true, help: "GitHub token for sync" },
  { key: "syncApiUrl", env: "GANTRY_SYNC_API_URL", flag: "sync-api-url", kind: "string", default: "https://api.github.com", help: "GitHub (or compatible) API base URL for periodic sync", accepts: URL_WORDS, valid: httpUrl },
  { key: "syncPrereleases", env: "GANTRY_SYNC_PRERELEASES", flag: "sync-prereleases", kind: "bool", default: false, help: "periodic sync also mirrors pre-releases" },
  { key: "metricsPublic", env: "GANTRY_METRICS_PUBLIC", flag: "metrics-public", kind: "bool", default: false, help: "serve GET /metrics without the admin token (for a scraper on a private network)" },
  { key: "releasePublicKey", env: "GANTRY_RELEASE_PUBLIC_KEY", flag: "release-public-key", kind: "string", default: "", help: "minisign public key releases are signed with: publish and sync then require each asset's NAME.minisig or NAME.sig and refuse an asset whose signature is missing or wrong (empty: signatures carried when present, not required)", accepts: "a minisign public key: its base64 line (RW…), the base64 of a .pub file (as in tauri.conf.json), or a .pub file's path", valid: isPublicKeySetting },
  { key: "allowedFetchHosts", env: "GANTRY_ALLOWED_FETCH_HOSTS", flag: "allowed-fetch-hosts", kind: "list", default: [], help: "comma-separated hosts that asset downloads and release syncs may fetch from although they resolve to loopback, private or link-local addresses (others are refused)", accepts: "a host name or IP address (e.g. files.internal, 10.0.0.5, ::1)", validEntry: (e) => /^[A-Za-z0-9.-]{1,253}$/.test(e) || parseIp(e) !== null },
  { key: "corsOrigins", env: "GANTRY_CORS_ORIGINS", flag: "cors-origins", kind: "list", default: [], help: "comma-separated web origins allowed to read the public site API (/api/v1/*, /update/latest.json) from a browser; empty = every origin (*)", accepts: "an origin: scheme://host[:port] with no path (e.g. https://app.example.com)", validEntry: (e) => /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(e) },
];

/** Every problem found, each a sentence naming the setting; the message lists them all. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.length === 1 ? `invalid setting: ${problems[0]}` : `invalid settings:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

/** How a problem names its setting: `--port (GANTRY_PORT)`, plus where the value came from when not from the flag. */
function settingLabel(def: SettingDef, source: string): string {
  return source === "flag" ? `--${def.flag} (${def.env})` : `--${def.flag} (${def.env}, from ${source})`;
}

/** A value as the operator wrote it, quoted: 'abc', or the TOML value as JSON; credentials in a URL hidden. */
function shown(raw: unknown): string {
  return typeof raw === "string" ? `'${redactUrlCredentials(raw)}'` : JSON.stringify(raw);
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** Converts one value (a string from a flag or the environment; typed from gantry.toml) and checks it. */
function resolve(def: SettingDef, raw: unknown, source: string, env: Record<string, string | undefined>): { value?: unknown; problems?: string[] } {
  const label = settingLabel(def, source);
  const not = (what: string) => ({ problems: [`${label}: ${shown(raw)} is not ${what}`] });
  let value: unknown = raw;
  if (typeof raw === "string") {
    switch (def.kind) {
      case "int":
      case "number":
        value = raw.trim() === "" ? NaN : Number(raw.trim());
        break;
      case "bool":
        if (/^(1|true|yes|on)$/i.test(raw)) value = true;
        else if (/^(0|false|no|off)$/i.test(raw)) value = false;
        else return not("true or false (also: 1/0, yes/no, on/off)");
        break;
      case "list":
        value = raw.split(",").map((s) => s.trim()).filter(Boolean);
        break;
      case "json":
        try {
          value = JSON.parse(raw);
        } catch (err) {
          return { problems: [`${label}: not valid JSON (${(err as Error).message})`] };
        }
        break;
    }
  } else if (def.kind === "list" && Array.isArray(raw)) {
    value = raw.map(String);
  }
  const kindOk =
    def.kind === "string" ? typeof value === "string"
    : def.kind === "int" || def.kind === "number" ? typeof value === "number"
    : def.kind === "bool" ? typeof value === "boolean"
    : def.kind === "list" ? Array.isArray(value)
    : true;
  if (!kindOk) {
    const words = { string: "text", int: "a whole number", number: "a number", bool: "true or false", list: "a comma-separated list", json: "" };
    return not(def.accepts ?? words[def.kind]);
  }
  if (def.kind === "int" && !def.valid && !Number.isInteger(value)) return not("a whole number");
  if (def.validEntry) {
    const bad = (value as string[]).filter((e) => !def.validEntry!(e));
    if (bad.length) return { problems: bad.map((e) => `${label}: ${shown(e)} is not ${def.accepts}`) };
  }
  if (def.schema && !Value.Check(def.schema, value)) {
    const at = Value.Errors(def.schema, value).First()?.path;
    return { problems: [`${label}: ${clip(JSON.stringify(value))} is not ${def.accepts}${at ? ` (problem at ${at})` : ""}`] };
  }
  if (def.entryProblems) {
    const found = def.entryProblems(value);
    if (found.length) return { problems: found.map((p) => `${label}: ${p}`) };
  }
  if (def.valid && !def.valid(value)) return not(def.accepts!);
  if (def.convert) return def.convert(value, label, env);
  return { value };
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
    throw new ConfigError([`${path}: not valid TOML (${(err as Error).message})`]);
  }
}

export interface LoadOptions {
  /** For the server: the TLS certificate and key files must be readable (a missing one is a settings problem, not a crash later). */
  checkFiles?: boolean;
}

/**
 * Resolves every setting. `flags` holds parsed command-line values keyed by flag name (strings, as typed).
 * Throws ConfigError listing every problem at once, each naming the setting and what it accepts, so an
 * operator fixes them in one go.
 */
export function loadConfig(
  flags: Record<string, unknown> = {},
  env: Record<string, string | undefined> = process.env,
  options: LoadOptions = {},
): Config {
  const problems: string[] = [];
  const pick = (def: SettingDef, toml: Record<string, unknown>): [unknown, string] | undefined => {
    if (flags[def.flag] !== undefined) return [flags[def.flag], "flag"];
    if (env[def.env] !== undefined && env[def.env] !== "") return [env[def.env], "the environment"];
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
  const bad = new Set<keyof Config>();
  for (const def of SETTINGS) {
    const found = pick(def, toml);
    if (!found) {
      out[def.key] = structuredClone(def.default);
      continue;
    }
    const r = resolve(def, found[0], found[1], env);
    if (r.problems) {
      problems.push(...r.problems);
      bad.add(def.key);
    } else out[def.key] = r.value;
  }

  const ok = (...keys: Array<keyof Config>) => keys.every((k) => !bad.has(k));
  if (ok("tlsCert", "tlsKey") && Boolean(out.tlsCert) !== Boolean(out.tlsKey)) {
    problems.push("--tls-cert (GANTRY_TLS_CERT) and --tls-key (GANTRY_TLS_KEY) go together: set both or neither");
  }
  if (ok("httpRedirectPort", "tlsCert") && out.httpRedirectPort && !out.tlsCert) {
    problems.push("--http-redirect-port (GANTRY_HTTP_REDIRECT_PORT) needs TLS (--tls-cert and --tls-key)");
  }
  if (options.checkFiles && ok("tlsCert", "tlsKey")) problems.push(...fileProblems(out as Partial<Config>));
  problems.push(...upstreamProblems(out as Partial<Config>, pick(SETTINGS.find((s) => s.key === "upstreams")!, toml)?.[1] ?? null, dataDir));
  if (problems.length) throw new ConfigError(problems);
  const config = out as Config;
  config.upstreamUrl = config.upstreamUrl.replace(/\/+$/, "");
  config.publicUrl = config.publicUrl.replace(/\/+$/, "");
  return config;
}

/**
 * The accounts and the single-upstream settings are two ways to say the same thing: both at once is refused rather
 * than one silently winning. A key written inline in gantry.toml makes the file a secret: refused while anyone may
 * read it.
 */
function upstreamProblems(config: Partial<Config>, source: string | null, dataDir: string): string[] {
  const accounts = config.upstreams ?? [];
  if (accounts.length === 0) return [];
  const problems: string[] = [];
  if (config.upstreamUrl || config.upstreamKey) {
    problems.push("--upstreams (GANTRY_UPSTREAMS or [[upstreams]]) and --upstream-url/--upstream-key (GANTRY_UPSTREAM_URL/_KEY) are exclusive: declare the accounts in one place (the single URL and key are a pool of one named default)");
  }
  if (source === "gantry.toml" && accounts.some((a) => a.keyInline)) {
    const path = join(dataDir, "gantry.toml");
    try {
      if ((statSync(path).mode & 0o004) !== 0) {
        const names = accounts.filter((a) => a.keyInline).map((a) => a.name).join(", ");
        problems.push(`${path}: holds an upstream key inline (account ${names}) and is readable by every user: chmod o-r it, or use key_env`);
      }
    } catch {
      // Read a moment ago: a file gone since is not this check's to report.
    }
  }
  return problems;
}

/** The files the server reads at start (TLS certificate and key), each unreadable one as a problem naming its path. */
function fileProblems(config: Partial<Config>): string[] {
  const problems: string[] = [];
  for (const key of ["tlsCert", "tlsKey"] as const) {
    const def = SETTINGS.find((s) => s.key === key)!;
    const path = config[key];
    const why = path ? unreadable(path) : null;
    if (why) problems.push(`--${def.flag} (${def.env}): cannot read '${path}' (${why})`);
  }
  return problems;
}

/** For a server started from settings loaded without `checkFiles`: the same check, as a ConfigError. */
export function checkServerFiles(config: Config): void {
  const problems = fileProblems(config);
  if (problems.length) throw new ConfigError(problems);
}

/** Why a file cannot be read, in words, or null when it can. */
function unreadable(path: string): string | null {
  try {
    if (statSync(path).isDirectory()) return "it is a directory";
    readFileSync(path);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "no such file";
    if (code === "EACCES" || code === "EPERM") return "permission denied";
    return (err as Error).message;
  }
}

/**
 * The settings as an operator may see them, with every secret redacted, and credentials inside any URL
 * (an upstream, public or API URL given as `http://user:pass@host`) hidden as well.
 */
export function describeConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const def of SETTINGS) {
    const v = config[def.key];
    if (def.describe) out[def.key] = def.describe(v);
    else if (typeof v === "string") out[def.key] = !def.secret ? redactUrlCredentials(v) : def.secret === "url" ? redactUrlPassword(v) : redact(v);
    else if (Array.isArray(v)) out[def.key] = v.map((e) => (typeof e === "string" ? redactUrlCredentials(e) : e));
    else out[def.key] = v;
  }
  return out;
}

/** The settings that differ from their defaults, shown as describeConfig shows them: a short start-up line. */
export function changedSettings(config: Config): Record<string, unknown> {
  const shown = describeConfig(config);
  const out: Record<string, unknown> = {};
  for (const def of SETTINGS) {
    if (JSON.stringify(config[def.key]) !== JSON.stringify(def.default)) out[def.key] = shown[def.key];
  }
  return out;
}

/** Defaults, for tests and for embedding. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  const out: Record<string, unknown> = {};
  for (const def of SETTINGS) out[def.key] = structuredClone(def.default);
  return { ...(out as Config), ...overrides };
}
