/**
 * Documentation of the public contract (spec/model-gateway.md and spec/site-api.md) for /openapi.json.
 *
 * The gateway and most site routes read their own bodies (bounded, raw bytes kept for passthrough), so
 * Elysia has no body schema to describe them. These TypeBox schemas are documentation only: they are
 * attached as `detail` (never as `body`/`query`), so Elysia neither parses nor validates anything because
 * of them. Unknown fields are allowed everywhere, as the gateway passes them on.
 */
import { t, type DocumentDecoration, type TSchema } from "elysia";

const open = { additionalProperties: true };

export const ErrorEnvelope = t.Object(
  {
    error: t.Object({
      message: t.String(),
      type: t.String({ examples: ["invalid_request_error", "authentication_error", "permission_error", "insufficient_quota"] }),
      code: t.Union([t.String(), t.Null()], { examples: ["invalid_api_key", "rate_limit_rpm", "quota_exceeded"] }),
      param: t.Union([t.String(), t.Null()]),
    }),
  },
  { description: "Every failure, whatever the endpoint." },
);

const ContentPart = t.Object({ type: t.String({ examples: ["input_text", "output_text"] }), text: t.String() }, open);

const InputItem = t.Union([
  t.Object(
    {
      type: t.Optional(t.Literal("message")),
      role: t.String({ examples: ["user", "assistant", "system", "developer"] }),
      content: t.Union([t.String(), t.Array(ContentPart)]),
    },
    { ...open, title: "message" },
  ),
  t.Object(
    { type: t.Literal("function_call"), call_id: t.String(), name: t.String(), arguments: t.String({ description: "JSON text" }) },
    { ...open, title: "function_call" },
  ),
  t.Object(
    { type: t.Literal("function_call_output"), call_id: t.String(), output: t.String() },
    { ...open, title: "function_call_output" },
  ),
]);

const FunctionTool = t.Object(
  {
    type: t.Literal("function"),
    name: t.String(),
    description: t.Optional(t.String()),
    parameters: t.Optional(t.Object({}, { ...open, description: "JSON Schema of the arguments" })),
  },
  open,
);

export const ResponsesRequest = t.Object(
  {
    model: t.String({ description: "A model id from GET /v1/models." }),
    input: t.Union([t.String(), t.Array(InputItem)]),
    stream: t.Optional(t.Boolean({ description: "false: the gateway still streams upstream and answers with one JSON object." })),
    instructions: t.Optional(t.String({ description: "Defaults to 'You are a helpful assistant.'" })),
    tools: t.Optional(t.Array(FunctionTool)),
    tool_choice: t.Optional(t.Union([t.String(), t.Object({ type: t.Literal("function"), name: t.String() })])),
    include: t.Optional(t.Array(t.String())),
    parallel_tool_calls: t.Optional(t.Boolean()),
    max_output_tokens: t.Optional(t.Integer({ minimum: 1, description: "Checked against the key's max-tokens bound." })),
    reasoning: t.Optional(t.Object({ effort: t.Optional(t.String()) }, open)),
  },
  open,
);

export const ResponseObject = t.Object(
  {
    id: t.String(),
    object: t.Literal("response"),
    status: t.String({ examples: ["completed", "incomplete", "failed"] }),
    model: t.String(),
    output: t.Array(t.Object({ type: t.String() }, open)),
    usage: t.Optional(
      t.Object({ input_tokens: t.Integer(), output_tokens: t.Integer(), total_tokens: t.Optional(t.Integer()) }, open),
    ),
  },
  open,
);

const ChatMessage = t.Object(
  {
    role: t.String({ examples: ["system", "user", "assistant", "tool"] }),
    content: t.Union([
      t.String(),
      t.Null(),
      t.Array(
        t.Union([
          t.Object({ type: t.Literal("text"), text: t.String() }),
          t.Object({ type: t.Literal("image_url"), image_url: t.Object({ url: t.String() }, open) }),
        ]),
      ),
    ]),
  },
  open,
);

export const ChatCompletionsRequest = t.Object(
  {
    model: t.String(),
    messages: t.Array(ChatMessage),
    stream: t.Optional(t.Boolean()),
    tools: t.Optional(
      t.Array(
        t.Object({
          type: t.Literal("function"),
          function: t.Object({ name: t.String(), description: t.Optional(t.String()), parameters: t.Optional(t.Object({}, open)) }, open),
        }),
      ),
    ),
    tool_choice: t.Optional(t.Union([t.String({ examples: ["auto"] }), t.Object({}, open)])),
    max_tokens: t.Optional(t.Integer({ minimum: 1 })),
    max_completion_tokens: t.Optional(t.Integer({ minimum: 1 })),
  },
  open,
);

export const ChatCompletion = t.Object(
  {
    id: t.String(),
    object: t.Literal("chat.completion"),
    created: t.Integer(),
    model: t.String(),
    choices: t.Array(
      t.Object(
        {
          index: t.Integer(),
          message: t.Object(
            {
              role: t.Literal("assistant"),
              content: t.Union([t.String(), t.Null()]),
              tool_calls: t.Optional(
                t.Array(t.Object({ id: t.String(), type: t.Literal("function"), function: t.Object({ name: t.String(), arguments: t.String() }) })),
              ),
            },
            open,
          ),
          finish_reason: t.Union([t.String(), t.Null()]),
        },
        open,
      ),
    ),
    usage: t.Optional(t.Object({ prompt_tokens: t.Integer(), completion_tokens: t.Integer(), total_tokens: t.Integer() }, open)),
  },
  open,
);

export const ModelList = t.Object({
  object: t.Literal("list"),
  data: t.Array(t.Object({ id: t.String(), object: t.Literal("model") }, open)),
});

const LatestAsset = t.Object({
  id: t.Integer(),
  name: t.String(),
  platform: t.String({ examples: ["windows", "macos", "linux", "web"] }),
  arch: t.String({ examples: ["x64", "arm64", "universal"] }),
  fileType: t.String({ examples: ["exe", "dmg", "AppImage", "zip"] }),
  sha256: t.String({ description: "`sha256:<hex>`, or empty while unknown" }),
  size: t.Union([t.Integer(), t.Null()]),
  source: t.String({ examples: ["mirror", "proxy", "unavailable"] }),
  downloadUrl: t.String({ description: "Empty when the file cannot be downloaded." }),
  recommended: t.Boolean(),
});

export const LatestDocument = t.Object(
  {
    schema: t.Literal("app.latest.v1"),
    version: t.String(),
    publishedAt: t.String(),
    notes: t.String(),
    minAppVersion: t.String(),
    assets: t.Array(LatestAsset),
    download: t.Object({}, open),
    manifest: t.Union([t.Object({ url: t.String() }, open), t.Null()], { description: "The legacy manifest; null when /update/latest.json would answer 404 (no web bundle)" }),
    heartbeat: t.Object({}, open),
  },
  open,
);

export const LegacyManifest = t.Object(
  {
    version: t.String(),
    name: t.String(),
    url: t.String(),
    hash: t.String(),
    size: t.Union([t.Integer(), t.Null()]),
    minAppVersion: t.String(),
    notes: t.String(),
    pubDate: t.String(),
  },
  open,
);

const AnnouncementItem = t.Object({
  id: t.Integer(),
  type: t.String({ examples: ["modal"] }),
  displayType: t.String({ examples: ["modal"] }),
  targetSurface: t.Union([t.Literal("client"), t.Literal("home"), t.Literal("all")]),
  level: t.String({ examples: ["info", "warning", "critical"] }),
  title: t.String(),
  body: t.String(),
  ctaText: t.String(),
  ctaUrl: t.String(),
  minVersion: t.String(),
  maxVersion: t.String({ description: "Empty: no upper bound." }),
  startAt: t.String({ description: "ISO 8601 UTC" }),
  expiresAt: t.String({ description: "ISO 8601 UTC; empty: never" }),
  dismissKey: t.String(),
  testOnly: t.Boolean(),
});

export const AnnouncementDocument = t.Object({
  schema: t.Literal("app.announcements.v1"),
  surface: t.Union([t.Literal("client"), t.Literal("home")]),
  announcements: t.Array(AnnouncementItem),
});

export const Heartbeat = t.Object(
  {
    clientId: t.Optional(t.String({ description: "Stable per client; the X-App-Client-ID header is preferred." })),
    app: t.Optional(t.String()),
    version: t.Optional(t.String()),
    platform: t.Optional(t.String()),
    arch: t.Optional(t.String()),
    runtime: t.Optional(t.String()),
    locale: t.Optional(t.String()),
  },
  open,
);

export const HeartbeatReply = t.Object({ ok: t.Boolean(), nextIntervalSeconds: t.Integer(), onlineWindowSeconds: t.Integer() });

/** OpenAPI helpers over TypeBox schemas (which are JSON Schema already). */
const json = (schema: TSchema, description: string) => ({ description, content: { "application/json": { schema } } });
/** Anthropic's error envelope, which the Messages endpoint answers with. */
const MessagesErrorEnvelope = t.Object({
  type: t.Literal("error"),
  error: t.Object({ type: t.String({ description: "invalid_request_error, authentication_error, permission_error, not_found_error, request_too_large, rate_limit_error, api_error, overloaded_error" }), message: t.String() }),
});

const MessagesRequest = t.Object(
  {
    model: t.String(),
    max_tokens: t.Integer({ minimum: 1 }),
    messages: t.Array(t.Object({ role: t.String(), content: t.Union([t.String(), t.Array(t.Object({ type: t.String() }, open))]) }, open)),
    system: t.Optional(t.Union([t.String(), t.Array(t.Object({ type: t.Literal("text"), text: t.String() }, open))])),
    stream: t.Optional(t.Boolean()),
    stop_sequences: t.Optional(t.Array(t.String())),
    tools: t.Optional(t.Array(t.Object({ name: t.String(), description: t.Optional(t.String()), input_schema: t.Object({}, open) }, open))),
  },
  open,
);

const MessagesMessage = t.Object(
  {
    id: t.String(),
    type: t.Literal("message"),
    role: t.Literal("assistant"),
    model: t.String(),
    content: t.Array(t.Object({ type: t.String() }, open)),
    stop_reason: t.Union([t.String(), t.Null()]),
    stop_sequence: t.Union([t.String(), t.Null()]),
    usage: t.Object({ input_tokens: t.Integer(), output_tokens: t.Integer() }, open),
  },
  open,
);

const errors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [String(s), json(ErrorEnvelope, ERROR_TEXT[s] ?? "Error")]));
const ERROR_TEXT: Record<number, string> = {
  400: "Invalid request, or max_tokens_exceeded",
  401: "missing_api_key, invalid_api_key, api_key_expired",
  403: "api_key_disabled, model_not_allowed",
  404: "Not found",
  410: "The link was used or has expired",
  413: "Body too large",
  429: "quota_exceeded, rate_limit_rpm, rate_limit_rpd, concurrent_limit (with Retry-After)",
  502: "Upstream error",
  503: "Upstream not configured",
  504: "Upstream timeout",
};
const query = (name: string, description: string, schema: TSchema = t.String()) => ({ name, in: "query", required: false, description, schema });

const SSE = { "text/event-stream": { schema: t.String({ description: "Server-sent events; ends with the terminal event." }) } };
const security = [{ bearerAuth: [] }];

/**
 * TypeBox schemas are JSON Schema, which is what an OpenAPI schema object is; only their TypeScript types
 * differ from the openapi-types ones Elysia declares, hence the one cast below.
 */
export const GATEWAY_DOCS = {
  responses: {
    tags: ["Model gateway"],
    summary: "Create a response",
    description:
      "The native endpoint. The gateway forces streaming upstream and, for `stream: false`, answers with the collected response. " +
      "`X-Upstream-Mode: raw` (or `X-Upstream-Raw-Passthrough: true`) passes the body through unchanged. Also served at `/responses`.",
    security,
    parameters: [
      { name: "X-Upstream-Mode", in: "header", required: false, schema: t.Literal("raw"), description: "Raw passthrough: no rewriting at all." },
    ],
    requestBody: { required: true, content: { "application/json": { schema: ResponsesRequest } } },
    responses: {
      "200": { description: "A response object (stream: false) or an event stream (stream: true)", content: { "application/json": { schema: ResponseObject }, ...SSE } },
      ...errors(400, 401, 403, 413, 429, 502, 503, 504),
    },
  },
  chat: {
    tags: ["Model gateway"],
    summary: "Create a chat completion",
    description: "The compatibility endpoint, translated to and from the Responses API. Also served at `/chat/completions`.",
    security,
    requestBody: { required: true, content: { "application/json": { schema: ChatCompletionsRequest } } },
    responses: {
      "200": { description: "A chat completion (stream: false) or chunk events (stream: true)", content: { "application/json": { schema: ChatCompletion }, ...SSE } },
      ...errors(400, 401, 403, 413, 429, 502, 503, 504),
    },
  },
  messages: {
    tags: ["Model gateway"],
    summary: "Create a message (Anthropic Messages API)",
    description:
      "Anthropic's Messages API, translated to and from the Responses API, for Claude Code and the Anthropic SDKs. The key goes in `x-api-key` " +
      "(or `Authorization: Bearer`); errors use Anthropic's envelope and types; every reply carries `request-id`. Also served at `/messages`; `?beta=true` is accepted.",
    security,
    parameters: [{ name: "x-api-key", in: "header", required: false, schema: t.String(), description: "The Gantry key, as Anthropic's clients send it." }],
    requestBody: { required: true, content: { "application/json": { schema: MessagesRequest } } },
    responses: {
      "200": { description: "A message (stream: false) or Messages events (stream: true)", content: { "application/json": { schema: MessagesMessage }, ...SSE } },
      ...Object.fromEntries([400, 401, 403, 413, 429, 500, 502, 504, 529].map((s) => [String(s), json(MessagesErrorEnvelope, ERROR_TEXT[s] ?? (s === 529 ? "overloaded_error: the upstream is overloaded" : "Error"))])),
    },
  },
  countTokens: {
    tags: ["Model gateway"],
    summary: "Count a message's input tokens (Anthropic Messages API)",
    description:
      "The input tokens of a Messages request as the upstream's model family counts them (its own tokenizer), answered by Gantry without an upstream call " +
      "and without a ledger row. Admitted like a message: the key's model permission, RPM, RPD and concurrency apply. Also served at `/messages/count_tokens`; `?beta=true` is accepted.",
    security,
    parameters: [{ name: "x-api-key", in: "header", required: false, schema: t.String(), description: "The Gantry key, as Anthropic's clients send it." }],
    requestBody: { required: true, content: { "application/json": { schema: t.Object({ model: t.String(), messages: MessagesRequest.properties.messages }, open) } } },
    responses: {
      "200": json(t.Object({ input_tokens: t.Integer({ minimum: 0 }) }), "The count"),
      ...Object.fromEntries([400, 401, 403, 413, 429].map((s) => [String(s), json(MessagesErrorEnvelope, ERROR_TEXT[s] ?? "Error")])),
    },
  },
  models: {
    tags: ["Model gateway"],
    summary: "List models",
    description:
      "Live from the upstream (cached a few seconds), filtered by the key's model permission, with the exact names of the operator's model aliases first. " +
      "With an `anthropic-version` header: Anthropic's list shape (`data` of `type: model` entries, `has_more`, `first_id`, `last_id`; `limit`, `after_id`, `before_id`), " +
      "the key in `x-api-key` and errors in Anthropic's envelope. Also served at `/models`.",
    security,
    parameters: [
      query("limit", "With anthropic-version: 1 to 1000 (default 20)", t.Integer({ minimum: 1, maximum: 1000 })),
      query("after_id", "With anthropic-version: the page starts after this model"),
      query("before_id", "With anthropic-version: the page ends before this model"),
    ],
    responses: { "200": json(ModelList, "The models this key may use"), ...errors(401, 403, 429, 502, 503) },
  },
  retrieveModel: {
    tags: ["Model gateway"],
    summary: "Retrieve a model",
    description:
      "One model of the list, if this key may use it: `{id, object: \"model\", created, owned_by}`; an alias name (exact or matching a pattern) is its target's entry " +
      "under the name asked for. With an `anthropic-version` header: Anthropic's shape (`type: model`, `id`, `display_name`, `created_at`), the key in `x-api-key` and errors in Anthropic's envelope. " +
      "A model the upstream does not list, or one the key may not use, is a 404. Also served at `/models/{id}`.",
    security,
    responses: { "200": json(t.Object({ id: t.String(), object: t.Literal("model"), created: t.Integer(), owned_by: t.String() }, open), "The model"), ...errors(401, 404, 429, 502, 503) },
  },
  getResponse: {
    tags: ["Model gateway"],
    summary: "Retrieve a stored response",
    description: "A response this key created with `store` (the default), as it was returned. Another key's, an expired or a deleted one is a 404. Also served at `/responses/{id}`.",
    security,
    responses: { "200": json(ResponseObject, "The stored response"), ...errors(401, 403, 404, 429) },
  },
  inputItems: {
    tags: ["Model gateway"],
    summary: "List a stored response's input items",
    description: "The items of the request that created the response, newest first unless `order=asc`. Also served at `/responses/{id}/input_items`.",
    security,
    parameters: [
      query("limit", "1 to 100 (default 20)", t.Integer({ minimum: 1, maximum: 100 })),
      query("order", "desc (default) or asc", t.Union([t.Literal("desc"), t.Literal("asc")])),
      query("after", "An item id: the page starts after it"),
    ],
    responses: {
      "200": json(
        t.Object({ object: t.Literal("list"), data: t.Array(t.Object({}, { additionalProperties: true })), first_id: t.Union([t.String(), t.Null()]), last_id: t.Union([t.String(), t.Null()]), has_more: t.Boolean() }),
        "A page of input items",
      ),
      ...errors(400, 401, 403, 404, 429),
    },
  },
  deleteResponse: {
    tags: ["Model gateway"],
    summary: "Delete a stored response",
    description: "Removes a response this key stored; it can no longer be retrieved or continued. Also served at `/responses/{id}`.",
    security,
    responses: {
      "200": json(t.Object({ id: t.String(), object: t.Literal("response"), deleted: t.Literal(true) }), "Deleted"),
      ...errors(401, 403, 404, 429),
    },
  },
} as unknown as Record<"responses" | "chat" | "messages" | "countTokens" | "models" | "retrieveModel" | "getResponse" | "inputItems" | "deleteResponse", DocumentDecoration>;

/** Documentation of the site routes, merged by path and method into the generated document. */
export const SITE_DOCS: Record<string, Record<string, Record<string, unknown>>> = {
  "/api/v1/latest": {
    get: {
      tags: ["Updates"],
      summary: "Latest release",
      description: "The newest release with its assets, filtered by the query. Revalidate on every use (ETag).",
      parameters: [
        query("platform", "windows, macos, linux, web"),
        query("arch", "x64, arm64, x86, universal"),
        query("file_type", "exe, dmg, AppImage, zip, ..."),
      ],
      responses: { "200": json(LatestDocument, "The latest-release document"), "304": { description: "Not modified" }, ...errors(400) },
    },
  },
  "/api/v1/download/{assetId}": {
    get: {
      tags: ["Updates"],
      summary: "Download an asset",
      description: "Redirects to a short-lived signed link `/dl/{token}` for this client; follow the redirect. At most GANTRY_DOWNLOAD_MINT_RPM links a minute per client address.",
      responses: { "302": { description: "Location: the download link" }, ...errors(404), "429": { description: "too_many_requests: too many links from this address (with Retry-After)" } },
    },
  },
  "/dl/{token}": {
    get: {
      tags: ["Updates"],
      summary: "Download link",
      description: "The asset's bytes, from the mirror or proxied. Supports Range requests (206) and HEAD, any number of times until the link expires (resumes), from the client it was issued to.",
      responses: {
        "200": { description: "The file", content: { "application/octet-stream": { schema: t.String({ format: "binary" }) } } },
        "206": { description: "The requested range" },
        ...errors(404, 410),
      },
    },
    head: { tags: ["Updates"], summary: "Download link (headers only)", responses: { "200": { description: "Headers of the file" } } },
  },
  "/api/v1/announcements": {
    get: {
      tags: ["Announcements"],
      summary: "Announcements for a client or the home page",
      parameters: [
        query("surface", "client or home", t.Union([t.Literal("client"), t.Literal("home")])),
        query("app", "App name"),
        query("version", "Client version (dotted numeric)"),
        query("locale", "Language tag, e.g. zh-CN"),
        query("test", "1 includes test announcements"),
        query("staging", "1 includes test announcements"),
      ],
      responses: { "200": json(AnnouncementDocument, "The announcement document"), "304": { description: "Not modified" }, ...errors(400) },
    },
  },
  "/api/v1/client/heartbeat": {
    post: {
      tags: ["Telemetry"],
      summary: "Client heartbeat",
      description: "About every 60 s. A client counts as online for 5 minutes after a report.",
      parameters: [{ name: "X-App-Client-ID", in: "header", required: false, description: "The client's stable id (preferred carrier)", schema: t.String() }],
      requestBody: { required: true, content: { "application/json": { schema: Heartbeat } } },
      responses: { "200": json(HeartbeatReply, "Recorded"), ...errors(400, 413) },
    },
  },
  "/update/electron/{file}": {
    get: { tags: ["Updater feeds"], summary: "electron-updater (generic provider)", description: "`latest.yml`, `latest-mac.yml`, `latest-linux.yml`, `latest-linux-arm64.yml` and `CHANNEL*.yml`: version, files with SHA-512 and size, staging percentage. The `x-user-staging-id` header places the client in a staged rollout.", responses: { "200": { description: "The YAML document" }, ...errors(400, 404) } },
  },
  "/update/tauri/latest.json": {
    get: { tags: ["Updater feeds"], summary: "Tauri v2 (static)", description: "The `platforms` document with each bundle's URL and signature.", responses: { "200": { description: "The static document" }, ...errors(404) } },
  },
  "/update/tauri/{target}/{arch}/{current_version}": {
    get: { tags: ["Updater feeds"], summary: "Tauri v2 (dynamic)", description: "204 when the client is up to date, else version, notes, pub_date, url and the signature Tauri verifies.", parameters: [query("bundle_type", "appimage, deb, rpm, msi, nsis, app")], responses: { "200": { description: "The update" }, "204": { description: "Up to date" }, ...errors(400) } },
  },
  "/update/squirrel-mac/{arch}/{version}": {
    get: { tags: ["Updater feeds"], summary: "Squirrel.Mac", description: "204 when up to date, else `{url, name, notes, pub_date}`.", responses: { "200": { description: "The update" }, "204": { description: "Up to date" }, ...errors(400) } },
  },
  "/update/squirrel-windows/{arch}/RELEASES": {
    get: { tags: ["Updater feeds"], summary: "Squirrel.Windows RELEASES", description: "SHA-1, file name and size of each package; the packages are fetched beside it.", responses: { "200": { description: "The RELEASES file" }, ...errors(400, 404) } },
  },
  "/update/sparkle/appcast.xml": {
    get: { tags: ["Updater feeds"], summary: "Sparkle appcast", parameters: [query("arch", "arm64, x64"), query("client_id", "The app's stable id, for staged rollouts")], responses: { "200": { description: "The RSS appcast" }, ...errors(400) } },
  },
  "/update/velopack/{file}": {
    get: { tags: ["Updater feeds"], summary: "Velopack", description: "`releases.{channel}.json` and the packages it names.", responses: { "200": { description: "The feed or a package" }, ...errors(400, 404) } },
  },
  "/update/files/{assetId}/{name}": {
    get: { tags: ["Updater feeds"], summary: "A feed's download address", description: "Redirects to a short-lived signed link `/dl/{token}`, like /api/v1/download/{assetId}.", responses: { "302": { description: "Location: the download link" }, ...errors(404) } },
  },
  "/update/latest.json": {
    get: {
      tags: ["Updates"],
      summary: "Legacy updater manifest",
      description: "The latest web-*.zip only, for older clients.",
      responses: { "200": json(LegacyManifest, "The manifest"), "304": { description: "Not modified" }, ...errors(404) },
    },
  },
};
