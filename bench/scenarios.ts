/**
 * The scenarios of the suite and their targets, as in issue 8. A "pair" scenario alternates a baseline and a
 * target server under the same load; its targets are ratios of the target's figure to the baseline's from the
 * same run. The other kinds (heartbeats, open streams, key check) have their own procedure in run.ts.
 */
import type { DynamicLoad, LoadRequest } from "./load";
import type { Proc } from "./servers";

/** "gantry-shared": the same data on PostgreSQL + Redis (its CPU counts theirs too). */
export type ServerName = "gantry" | "gantry-shared" | "bare-proxy" | "js-relay" | "bun-static" | "nginx" | "upstream";

export interface BenchContext {
  servers: Partial<Record<ServerName, Proc>>;
  apiKey: string;
  /** A key with every limit set (RPM, RPD, concurrency, token quota), so each request runs the whole admission. */
  limitedKey: string;
  workDir: string;
  quick: boolean;
  durationSeconds: number;
  download: { assetId: number; size: number };
  /** Fresh one-time /dl/ tokens from Gantry (each from its own /api/v1/download/{id} redirect). */
  mintTokens(n: number): Promise<string[]>;
}

export interface Side {
  server: ServerName;
  /** Called before every run: downloads mint their tokens here. */
  load(ctx: BenchContext): LoadRequest | DynamicLoad | Promise<LoadRequest | DynamicLoad>;
  /** One request checked before any load, so a broken route fails loudly instead of benchmarking 4xx. */
  check?: Check;
}

export interface Check {
  request(ctx: BenchContext): LoadRequest;
  status?: number;
  /** Substrings the body must contain, at least this many times (default 1). */
  contains?: Array<[string, number?]>;
}

export type Metric =
  /** target CPU per request / baseline's */
  | "cpu-ratio"
  /** target req/s / baseline's */
  | "rps-ratio"
  /** target bytes/s / baseline's */
  | "throughput-ratio"
  /** target req/s (absolute) */
  | "rps"
  /** target peak RSS growth over the run, MiB */
  | "rss-growth-mib"
  /** server RSS growth per open stream, KiB */
  | "kib-per-stream"
  /** key-table SQL statements per request */
  | "key-sql-per-request"
  /** ms from a key change (CLI exit) to the server acting on it */
  | "invalidation-ms";

export interface Target {
  metric: Metric;
  op: "<=" | ">=";
  value: number;
  text: string;
}

interface Base {
  name: string;
  title: string;
  targets: Target[];
  /** Information only: no targets, shown for context. */
  note?: string;
}

export interface PairScenario extends Base {
  kind: "pair";
  baseline: Side;
  target: Side;
  connections: number;
  /** Throughput scenarios show bytes/s instead of req/s. */
  bytes?: boolean;
  /** Also report the target's p50 minus the baseline's: the latency a caller adds by going through Gantry. */
  addedLatency?: boolean;
}

export interface SpecialScenario extends Base {
  kind: "heartbeats" | "open-streams" | "key-check";
}

export type Scenario = PairScenario | SpecialScenario;

// ---- requests -------------------------------------------------------------------------------------------

const PROMPT = [
  { role: "developer", content: "You are terse." },
  { role: "user", content: "Say hello to the benchmark." },
];
export const RESPONSES_STREAM_BODY = JSON.stringify({ model: "demo-mini", stream: true, input: PROMPT });
const RESPONSES_UNKEPT_BODY = JSON.stringify({ model: "demo-mini", stream: true, store: false, input: PROMPT });
const RESPONSES_COLLECT_BODY = JSON.stringify({ model: "demo-mini", stream: false, input: PROMPT });
const CHAT_PROMPT = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Say hello to the benchmark." },
];
const CHAT_STREAM_BODY = JSON.stringify({ model: "demo-mini", stream: true, messages: CHAT_PROMPT });
const CHAT_COLLECT_BODY = JSON.stringify({ model: "demo-mini", stream: false, messages: CHAT_PROMPT });
export const HEARTBEAT_BODY = JSON.stringify({ app: "bench-app", version: "1.4.0", platform: "linux", arch: "x64", runtime: "bun", locale: "en-US" });

const JSON_TYPE = { "Content-Type": "application/json" };
const auth = (ctx: BenchContext) => ({ Authorization: `Bearer ${ctx.apiKey}` });

function post(path: string, body: string, headers: Record<string, string> = {}): LoadRequest {
  return { method: "POST", path, body, headers: { ...JSON_TYPE, ...headers } };
}
function get(path: string, headers: Record<string, string> = {}): LoadRequest {
  return { method: "GET", path, headers };
}

/** The bare proxy relaying the same upstream stream: the floor every gateway scenario is compared with. */
const proxyStream: Side = {
  server: "bare-proxy",
  load: () => post("/v1/responses", RESPONSES_STREAM_BODY),
  check: { request: () => post("/v1/responses", RESPONSES_STREAM_BODY), contains: [["event: response.output_text.delta", 20], ["response.completed"]] },
};

function gantrySide(request: (ctx: BenchContext) => LoadRequest, contains: Array<[string, number?]>): Side {
  return { server: "gantry", load: request, check: { request, contains } };
}

function staticSide(server: "bun-static" | "nginx", path: string): Side {
  return { server, load: () => get(path), check: { request: () => get(path) } };
}

// ---- downloads ------------------------------------------------------------------------------------------

const RANGE_BYTES = 1024 * 1024;

/** Lua: each request takes the next token from a file (a full GET consumes its token). */
function tokenLua(tokensFile: string): string {
  return `
local tokens = {}
local i = 0
init = function(args)
  for line in io.lines(${JSON.stringify(tokensFile)}) do tokens[#tokens + 1] = line end
end
request = function()
  i = i + 1
  local t = tokens[((i - 1) % #tokens) + 1]
  return wrk.format("GET", "/dl/" .. t)
end
`;
}

/** Lua: random 1 MiB ranges (aligned) of a file of `size` bytes, the same sequence for every server. */
function rangeLua(path: string, size: number): string {
  const slots = Math.max(1, Math.floor(size / RANGE_BYTES));
  return `
local n = 0
init = function(args) math.randomseed(42) end
request = function()
  local s = math.random(0, ${slots - 1}) * ${RANGE_BYTES}
  return wrk.format("GET", ${JSON.stringify(path)}, { ["Range"] = "bytes=" .. s .. "-" .. (s + ${RANGE_BYTES - 1}) })
end
`;
}

async function fullDownloadLoad(ctx: BenchContext): Promise<DynamicLoad> {
  // Enough fresh tokens for the fastest plausible run (8 GB/s) of the whole duration, one per GET.
  const n = Math.ceil((ctx.durationSeconds * 8e9) / ctx.download.size) + 50;
  const tokens = await ctx.mintTokens(Math.min(n, 5000));
  const file = `${ctx.workDir}/tokens-${Date.now()}.txt`;
  await Bun.write(file, tokens.join("\n") + "\n");
  return { lua: tokenLua(file) };
}

let rangeToken: string | null = null;


// ---- scale-out sides ------------------------------------------------------------------------------------

function limitedStream(server: "gantry" | "gantry-shared"): Side {
  const request = (ctx: BenchContext) => post("/v1/responses", RESPONSES_STREAM_BODY, { Authorization: `Bearer ${ctx.limitedKey}` });
  return { server, load: request, check: { request, contains: [["response.completed"]] } };
}

/** Heartbeats for ever new client ids (a per-side prefix, so the two stores see the same pattern). */
function heartbeatSide(server: "gantry" | "gantry-shared"): Side {
  const one = () => post("/api/v1/client/heartbeat", HEARTBEAT_BODY, { "X-App-Client-ID": `bench-check-${server}` });
  return {
    server,
    load: () => ({
      lua: `
local n = 0
local body = ${JSON.stringify(HEARTBEAT_BODY)}
setup = function(thread) thread:set("tid", tostring(math.random(1, 1e9))) end
request = function()
  n = n + 1
  return wrk.format("POST", "/api/v1/client/heartbeat",
    { ["Content-Type"] = "application/json", ["X-App-Client-ID"] = "bench-" .. tid .. "-" .. (n % 100000) }, body)
end
`,
    }),
    check: { request: one },
  };
}

// ---- the list -------------------------------------------------------------------------------------------

export const SCENARIOS: Scenario[] = [
  {
    kind: "pair",
    name: "overhead-sequential",
    title: "added latency, one connection: Gantry vs the fake upstream called directly",
    connections: 1,
    addedLatency: true,
    baseline: {
      server: "upstream",
      load: () => post("/v1/responses", RESPONSES_STREAM_BODY),
      check: { request: () => post("/v1/responses", RESPONSES_STREAM_BODY), contains: [["response.completed"]] },
    },
    target: gantrySide((ctx) => post("/v1/responses", RESPONSES_STREAM_BODY, auth(ctx)), [["response.completed"]]),
    targets: [],
    note: "no target; research notes §5 suggest sub-ms added latency in this sequential test",
  },
  {
    kind: "pair",
    name: "responses-stream",
    title: "/v1/responses stream (20 deltas), normalised",
    connections: 50,
    baseline: proxyStream,
    target: gantrySide((ctx) => post("/v1/responses", RESPONSES_STREAM_BODY, auth(ctx)), [["event: response.output_text.delta", 20], ["response.completed"]]),
    targets: [
      { metric: "cpu-ratio", op: "<=", value: 2, text: "CPU/req ≤ 2× bare proxy" },
      { metric: "rps-ratio", op: ">=", value: 0.7, text: "req/s ≥ 0.7× bare proxy" },
    ],
    note: "kept for previous_response_id, as by default",
  },
  {
    kind: "pair",
    name: "relay-floor",
    title: "the same stream through a minimal JavaScript relay (reads the body, splits frames, parses the terminal event's usage)",
    connections: 50,
    baseline: proxyStream,
    target: { ...proxyStream, server: "js-relay" },
    targets: [],
    note: "no target: the floor, in this run, of any gateway on Bun that reads the events in JavaScript (the target column is the relay, not Gantry)",
  },
  {
    kind: "pair",
    name: "responses-stream-unkept",
    title: "/v1/responses stream (20 deltas), normalised, store:false (as Codex-style CLIs send)",
    connections: 50,
    baseline: proxyStream,
    target: gantrySide((ctx) => post("/v1/responses", RESPONSES_UNKEPT_BODY, auth(ctx)), [["event: response.output_text.delta", 20], ["response.completed"]]),
    targets: [{ metric: "cpu-ratio", op: "<=", value: 2, text: "CPU/req ≤ 2× bare proxy" }],
  },
  {
    kind: "pair",
    name: "responses-raw",
    title: "/v1/responses raw passthrough (X-Upstream-Mode: raw)",
    connections: 50,
    baseline: proxyStream,
    target: gantrySide(
      (ctx) => post("/v1/responses", RESPONSES_STREAM_BODY, { ...auth(ctx), "X-Upstream-Mode": "raw" }),
      [["event: response.output_text.delta", 20], ["response.completed"]],
    ),
    targets: [{ metric: "cpu-ratio", op: "<=", value: 1.5, text: "CPU/req ≤ 1.5× bare proxy" }],
  },
  {
    kind: "pair",
    name: "responses-collect",
    title: "/v1/responses stream:false (collected)",
    connections: 50,
    baseline: proxyStream,
    target: gantrySide((ctx) => post("/v1/responses", RESPONSES_COLLECT_BODY, auth(ctx)), [['"output_text":"Gantry relays']]),
    targets: [],
    note: "no target; the bare proxy relays the stream it gets",
  },
  {
    kind: "pair",
    name: "chat-stream",
    title: "/v1/chat/completions stream (translated)",
    connections: 50,
    baseline: proxyStream,
    target: gantrySide((ctx) => post("/v1/chat/completions", CHAT_STREAM_BODY, auth(ctx)), [['"object":"chat.completion.chunk"', 20], ["data: [DONE]"]]),
    targets: [{ metric: "cpu-ratio", op: "<=", value: 2.5, text: "CPU/req ≤ 2.5× bare proxy" }],
  },
  {
    kind: "pair",
    name: "chat-collect",
    title: "/v1/chat/completions stream:false",
    connections: 50,
    baseline: proxyStream,
    target: gantrySide((ctx) => post("/v1/chat/completions", CHAT_COLLECT_BODY, auth(ctx)), [['"object":"chat.completion"']]),
    targets: [],
    note: "no target",
  },
  {
    kind: "pair",
    name: "models",
    title: "/v1/models (authenticated, cached)",
    connections: 50,
    baseline: { server: "bare-proxy", load: () => get("/v1/models"), check: { request: () => get("/v1/models"), contains: [['"demo-mini"']] } },
    target: gantrySide((ctx) => get("/v1/models", auth(ctx)), [['"demo-mini"']]),
    targets: [{ metric: "rps-ratio", op: ">=", value: 2, text: "req/s ≥ 2× bare proxy (which hops upstream)" }],
  },
  {
    kind: "pair",
    name: "latest-vs-static",
    title: "/api/v1/latest vs Bun static route (same bytes)",
    connections: 50,
    baseline: staticSide("bun-static", "/latest.json"),
    target: gantrySide(() => get("/api/v1/latest"), [['"schema":"app.latest.v1"']]),
    targets: [{ metric: "rps-ratio", op: ">=", value: 0.6, text: "req/s ≥ 0.6× static route" }],
  },
  {
    kind: "pair",
    name: "latest-vs-nginx",
    title: "/api/v1/latest vs nginx serving the same JSON file",
    connections: 50,
    baseline: staticSide("nginx", "/latest.json"),
    target: gantrySide(() => get("/api/v1/latest"), [['"schema":"app.latest.v1"']]),
    targets: [{ metric: "rps-ratio", op: ">=", value: 1, text: "req/s ≥ nginx" }],
  },
  {
    kind: "pair",
    name: "latest-filtered",
    title: "/api/v1/latest?platform=windows&arch=x64 vs static route",
    connections: 50,
    baseline: staticSide("bun-static", "/latest-filtered.json"),
    target: gantrySide(() => get("/api/v1/latest?platform=windows&arch=x64"), [['"schema":"app.latest.v1"']]),
    targets: [],
    note: "no target of its own (same rule as /api/v1/latest)",
  },
  {
    kind: "pair",
    name: "announcements",
    title: "/api/v1/announcements vs static route",
    connections: 50,
    baseline: staticSide("bun-static", "/announcements.json"),
    target: gantrySide(() => get("/api/v1/announcements?surface=client&app=bench-app&version=1.4.0&locale=en-US"), [['"schema":"app.announcements.v1"']]),
    targets: [],
    note: "no target",
  },
  {
    kind: "heartbeats",
    name: "heartbeats",
    title: "heartbeats, 64 clients, 100,000 ids, durable when acknowledged",
    targets: [{ metric: "rps", op: ">=", value: 20_000, text: "≥ 20,000 acknowledged/s" }],
  },
  {
    kind: "pair",
    name: "download-full",
    title: "/dl/ full GET of the big file (one fresh token per GET) vs nginx sendfile",
    connections: 4,
    bytes: true,
    baseline: { server: "nginx", load: () => get("/big.bin") },
    target: { server: "gantry", load: fullDownloadLoad },
    targets: [
      { metric: "throughput-ratio", op: ">=", value: 0.8, text: "bytes/s ≥ 0.8× nginx sendfile" },
      { metric: "rss-growth-mib", op: "<=", value: 32, text: "RSS flat (peak growth ≤ 32 MiB)" },
    ],
  },
  {
    kind: "pair",
    name: "download-ranged",
    title: "/dl/ 1 MiB Range GETs at random offsets (one token) vs nginx",
    connections: 4,
    bytes: true,
    baseline: { server: "nginx", load: (ctx) => ({ lua: rangeLua("/big.bin", ctx.download.size) }) },
    target: {
      server: "gantry",
      async load(ctx) {
        rangeToken ??= (await ctx.mintTokens(1))[0]!;
        return { lua: rangeLua(`/dl/${rangeToken}`, ctx.download.size) };
      },
    },
    targets: [],
    note: "no target of its own",
  },
  {
    kind: "open-streams",
    name: "open-streams",
    title: "1,000 open streams against a slow upstream",
    targets: [{ metric: "kib-per-stream", op: "<=", value: 64, text: "≤ 64 KiB server memory per open stream" }],
  },
  {
    kind: "key-check",
    name: "key-check",
    title: "API key check: SQL per request, invalidation delay",
    targets: [
      { metric: "key-sql-per-request", op: "<=", value: 0.01, text: "no per-request key SQL (≤ 0.01/req)" },
      { metric: "invalidation-ms", op: "<=", value: 1000, text: "a key change acts within 1 s" },
    ],
  },
  // ---- scale-out: the same work on PostgreSQL + Redis (target) against the embedded default (baseline) ----
  {
    kind: "pair",
    name: "shared-sequential",
    title: "added latency on PostgreSQL + Redis, one connection, a limited key (/v1/responses stream)",
    connections: 1,
    addedLatency: true,
    baseline: limitedStream("gantry"),
    target: limitedStream("gantry-shared"),
    targets: [],
    note: "no target: the latency one admission in Redis and one ledger batch in PostgreSQL add per request",
  },
  {
    kind: "pair",
    name: "shared-responses",
    title: "/v1/responses stream with a limited key: PostgreSQL + Redis vs embedded",
    connections: 50,
    baseline: limitedStream("gantry"),
    target: limitedStream("gantry-shared"),
    targets: [],
    note: "no target; the target's CPU includes PostgreSQL's and Redis's processes",
  },
  {
    kind: "pair",
    name: "shared-latest",
    title: "/api/v1/latest: PostgreSQL vs embedded",
    connections: 50,
    baseline: { server: "gantry", load: () => get("/api/v1/latest"), check: { request: () => get("/api/v1/latest"), contains: [['"version"']] } },
    target: { server: "gantry-shared", load: () => get("/api/v1/latest"), check: { request: () => get("/api/v1/latest"), contains: [['"version"']] } },
    targets: [],
    note: "no target",
  },
  {
    kind: "pair",
    name: "shared-heartbeats",
    title: "heartbeats (distinct client ids, acknowledged after commit): PostgreSQL vs embedded",
    connections: 64,
    baseline: heartbeatSide("gantry"),
    target: heartbeatSide("gantry-shared"),
    targets: [],
    note: "no target; PostgreSQL runs with fsync on, as SQLite does (synchronous=FULL)",
  },
];
