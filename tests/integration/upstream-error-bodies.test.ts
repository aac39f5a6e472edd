/**
 * Upstream error bodies are not echoed to callers verbatim: paths, internal host names, addresses and the gateway's
 * masked upstream key stay out of what the caller gets. A refusal of the caller's own request (other 4xx, as JSON)
 * keeps its code, type, param and message, with such places taken out; credentials refused (401/403), rate limits
 * and failures (5xx) get a generic message with the request id. What the upstream said is logged under that id.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream, type Scenario } from "../support/fake-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({ config: { upstreamUrl: upstream.url }, captureLogs: true });
  key = await g.createKey({ name: "error-bodies" });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

/** What must never reach a caller, in any of the bodies below. */
const INTERNALS = ["10.2.3.4", "8443", "/srv/gateway", "internal.corp", "svc.cluster.local", "/var/lib/upstream", "sk-proj", "****", "platform.openai.com", "org-abc123", "gw-7.prod", "<html", "https://"];

interface Case {
  name: string;
  scenario: Scenario;
  status: number;
  code: string;
  /** The message the caller gets (the request id is appended to generic ones). */
  message: string | RegExp;
  param?: string | null;
  type?: string;
}

const CASES: Case[] = [
  {
    name: "a 500 naming an internal address, path and host",
    scenario: {
      kind: "status",
      status: 500,
      body: { error: { message: "connect ECONNREFUSED 10.2.3.4:8443 at /srv/gateway/app.py line 12 (llm-backend.internal.corp)", type: "server_error" } },
    },
    status: 502,
    code: "upstream_error",
    message: /^The upstream failed \(500\)\. \(request req_[A-Za-z0-9_-]+\)$/,
  },
  {
    name: "a 401 quoting the gateway's masked key",
    scenario: {
      kind: "status",
      status: 401,
      body: {
        error: {
          message: "Incorrect API key provided: sk-proj-********************abcd. You can find your API key at https://platform.openai.com/account/api-keys.",
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      },
    },
    status: 502,
    code: "upstream_error",
    message: /^The upstream refused the gateway's credentials \(401\)\. \(request req_/,
  },
  {
    name: "a 502 HTML page from a proxy",
    scenario: { kind: "status", status: 502, body: "<html><body>502 Bad Gateway from gw-7.prod.example.com (10.2.3.4)</body></html>" },
    status: 502,
    code: "upstream_error",
    message: /^The upstream failed \(502\)\. \(request req_/,
  },
  {
    name: "a 429 naming the gateway's organisation",
    scenario: {
      kind: "status",
      status: 429,
      body: {
        error: {
          message: "Rate limit reached for gpt-5.4 in organization org-abc123 on tokens per min. Visit https://platform.openai.com/account/rate-limits to learn more.",
          type: "tokens",
          code: "rate_limit_exceeded",
        },
      },
      headers: { "retry-after": "3" },
    },
    status: 429,
    code: "rate_limit_exceeded",
    message: /^Rate limit reached upstream; try again after the Retry-After delay\. \(request req_/,
  },
  {
    name: "a 400 about the caller's request: kept, with code, type and param",
    scenario: {
      kind: "status",
      status: 400,
      body: {
        error: {
          message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
          type: "invalid_request_error",
          param: "input",
          code: "context_length_exceeded",
        },
      },
    },
    status: 400,
    code: "context_length_exceeded",
    message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    param: "input",
    type: "invalid_request_error",
  },
  {
    name: "a 400 about the caller's request that names internal places: kept without them",
    scenario: {
      kind: "status",
      status: 400,
      body: { detail: "Invalid value for 'input[0].content': /var/lib/upstream/cache/abc.json unreadable on upstream-3.svc.cluster.local:9000" },
    },
    status: 400,
    code: "upstream_invalid_request",
    message: "Invalid value for 'input[0].content': [path] unreadable on [host]",
    type: "invalid_request_error",
  },
  {
    name: "a 400 that is not JSON: a generic message",
    scenario: { kind: "status", status: 400, body: "Bad Request from proxy at 10.2.3.4:8443" },
    status: 400,
    code: "upstream_invalid_request",
    message: /^The upstream refused the request \(400\)\. \(request req_/,
  },
];

const ENDPOINTS = [
  { path: "/v1/responses", body: (stream: boolean) => ({ model: "gpt-5.4-mini", input: "hello", stream }) },
  { path: "/v1/chat/completions", body: (stream: boolean) => ({ model: "gpt-5.4-mini", messages: [{ role: "user", content: "hello" }], stream }) },
];

describe("upstream refusals as the caller gets them", () => {
  for (const c of CASES) {
    for (const ep of ENDPOINTS) {
      for (const stream of [true, false]) {
        test(`${ep.path}, stream:${stream}: ${c.name}`, async () => {
          upstream.setScenario(c.scenario);
          g.logs.length = 0;
          const res = await fetch(`${g.url}${ep.path}`, authed(key, ep.body(stream)));
          const text = await res.text();
          expect(res.status).toBe(c.status);
          for (const secret of INTERNALS) expect(text).not.toContain(secret);
          const { error } = JSON.parse(text);
          expect(error.code).toBe(c.code);
          if (typeof c.message === "string") expect(error.message).toBe(c.message);
          else expect(error.message).toMatch(c.message);
          const requestId = res.headers.get("x-request-id")!;
          if (c.message instanceof RegExp) expect(error.message).toEndWith(`(request ${requestId})`);
          if (c.param !== undefined) expect(error.param).toBe(c.param);
          if (c.type !== undefined) expect(error.type).toBe(c.type);
          if (c.status === 429) expect(res.headers.get("retry-after")).toBe("3");
          // The operator finds what the upstream said under the request id.
          const logged = g.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "upstream refused the request" && l.requestId === requestId);
          expect(logged).toBeDefined();
          expect(logged.upstreamStatus).toBe((c.scenario as { status: number }).status);
          expect(logged.detail.length).toBeGreaterThan(0);
          expect(logged.detail).not.toContain("sk-proj-*");
        });
      }
    }
  }
});
