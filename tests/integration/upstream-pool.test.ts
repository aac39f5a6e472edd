/**
 * A pool of upstream accounts against several real fake upstreams: failover before the first content for every kind
 * of fault, never after it; cooldowns that honour the upstream's reset headers (and extend to a later, longer one);
 * the caller's 429/503 when every account is out; an account refused for its key out until a probe; the half-open
 * single probe; priority and weight; one ledger row per call; in-flight counts back to zero. The clock is Gantry's
 * own (injected), so cooldowns of a minute pass at once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { authed, readSseData, startGantry, type Gantry } from "../support/harness";
import { startFakeUpstreams, type FakeUpstream, type Scenario } from "../support/fake-upstream";
import { pollUntil } from "../support/poll";

let offset = 0;
const now = () => Date.now() + offset;

/** A pool of two (a, then b, by priority), with every account healthy and every upstream answering again. */
function pool(g: () => Gantry, ups: () => FakeUpstream[]) {
  return {
    async reset() {
      offset = 0;
      for (const u of ups()) {
        u.setScenario();
        u.requests.length = 0;
      }
      for (const a of g().deps.accounts) await g().deps.poolState.enable(a.name);
    },
  };
}

const ask = (g: Gantry, key: string, extra: Record<string, unknown> = {}) =>
  fetch(`${g.url}/v1/responses`, authed(key, { model: "gpt-5.4", input: "hello pool", stream: true, store: false, ...extra }));
const posts = (u: FakeUpstream) => u.requests.filter((r) => r.path === "/v1/responses").length;

describe("failover before the first content", () => {
  let g: Gantry;
  let up: FakeUpstream[];
  let close: () => Promise<void>;
  let key: string;
  beforeAll(async () => {
    const f = await startFakeUpstreams([{ priority: 1, lenient: true }, { priority: 2, lenient: true }]);
    up = f.upstreams;
    close = f.close;
    g = await startGantry({ now, captureLogs: true, config: { upstreams: f.accounts, upstreamKey: "", upstreamFirstByteTimeoutMs: 400 } });
    key = await g.createKey();
  });
  afterAll(async () => {
    await g.stop();
    await close();
  });
  const p = pool(() => g, () => up);
  afterEach(() => p.reset());

  const FAULTS: Array<[string, Scenario]> = [
    ["429 with retry-after", { kind: "status", status: 429, headers: { "retry-after": "3" } }],
    ["429 with retry-after-ms", { kind: "status", status: 429, headers: { "retry-after-ms": "2500" } }],
    ["429 with x-ratelimit-reset-requests", { kind: "status", status: 429, headers: { "x-ratelimit-reset-requests": "1m0s" } }],
    ["429 with x-ratelimit-reset-tokens", { kind: "status", status: 429, headers: { "x-ratelimit-reset-tokens": "250ms" } }],
    ["429 insufficient_quota", { kind: "status", status: 429, body: { error: { message: "You exceeded your current quota.", type: "insufficient_quota", code: "insufficient_quota", param: null } } }],
    ["500", { kind: "status", status: 500 }],
    ["502 (HTML)", { kind: "status", status: 502 }],
    ["503", { kind: "status", status: 503 }],
    ["408", { kind: "status", status: 408 }],
    ["401", { kind: "status", status: 401 }],
    ["402", { kind: "status", status: 402 }],
    ["403", { kind: "status", status: 403 }],
    ["a hang before headers", { kind: "hang-before-headers" }],
    ["an error event after response.created", { kind: "error-event", nested: true, terminal: false }],
    ["an error event then response.failed", { kind: "error-event", nested: false }],
    ["response.failed before content", { kind: "failed" }],
    ["a cut before content", { kind: "reset-mid-stream", afterEvents: 2 }],
    ["a clean end before content", { kind: "end-after", afterEvents: 2 }],
  ];

  for (const [name, fault] of FAULTS) {
    test(`${name}: the caller gets the next account's answer, and nothing of the failed attempt`, async () => {
      up[0]!.setScenario(fault);
      const res = await ask(g, key);
      expect(res.status).toBe(200);
      const events = await readSseData(res);
      expect(events.filter((e) => e.type === "response.created")).toHaveLength(1);
      expect(events.some((e) => e.type === "error" || e.type === "response.failed")).toBe(false);
      expect(events.at(-1).type).toBe("response.completed");
      expect(events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("")).toBe("Echo: hello pool");
      expect(posts(up[0]!)).toBe(1);
      expect(posts(up[1]!)).toBe(1);
      expect(res.headers.get("x-request-id")).toBeTruthy();
    });
  }

  test("a collected (non-streamed) call fails over the same way", async () => {
    up[0]!.setScenario({ kind: "error-event", nested: true });
    const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "gpt-5.4", input: "hello pool", store: false }));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe("completed");
    expect(body.output[0].content[0].text).toBe("Echo: hello pool");
    expect([posts(up[0]!), posts(up[1]!)]).toEqual([1, 1]);
  });

  test("a chat completion fails over too", async () => {
    up[0]!.setScenario({ kind: "status", status: 503 });
    const res = await fetch(`${g.url}/v1/chat/completions`, authed(key, { model: "gpt-5.4", messages: [{ role: "user", content: "hello pool" }] }));
    expect(res.status).toBe(200);
    expect((await res.json()).choices[0].message.content).toBe("Echo: hello pool");
  });

  test("after the first content the call stays on its account: a cut ends in-band, with nothing of another account appended", async () => {
    up[0]!.setScenario({ kind: "reset-mid-stream", afterEvents: 5 });
    const res = await ask(g, key);
    expect(res.status).toBe(200);
    const events = await readSseData(res);
    expect(events.some((e) => e.type === "response.output_text.delta")).toBe(true);
    expect(events.at(-1).type).toBe("response.failed");
    expect(events.filter((e) => e.type === "response.created")).toHaveLength(1);
    expect(posts(up[1]!)).toBe(0);
  });

  test("raw passthrough fails over on the reply's status; with no account left the caller gets the last reply as it came", async () => {
    const raw = (k: string) => fetch(`${g.url}/v1/responses`, authed(k, { model: "gpt-5.4", input: "hello pool", stream: true }, { "x-upstream-mode": "raw" }));
    up[0]!.setScenario({ kind: "status", status: 503 });
    let res = await raw(key);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Echo: hello pool");
    expect([posts(up[0]!), posts(up[1]!)]).toEqual([1, 1]);
    await p.reset();
    up[0]!.setScenario({ kind: "status", status: 500 });
    up[1]!.setScenario({ kind: "status", status: 429, headers: { "retry-after": "9" } });
    res = await raw(key);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("9");
    expect((await res.json()).error.code).toBe("rate_limit_exceeded");
  });

  test("a 400 is the caller's: no failover", async () => {
    up[0]!.setScenario({ kind: "status", status: 400, body: { error: { message: "Invalid 'input'.", type: "invalid_request_error", code: "invalid_value", param: "input" } } });
    const res = await ask(g, key);
    expect(res.status).toBe(400);
    expect(posts(up[1]!)).toBe(0);
  });

  test("billed once: one ledger row, with the usage of the attempt that answered; logs name the account, never its key", async () => {
    up[0]!.setScenario({ kind: "error-event", nested: true });
    up[1]!.setScenario({ kind: "text", text: "from b", usage: { input_tokens: 11, output_tokens: 7 } });
    const res = await ask(g, key);
    const requestId = res.headers.get("x-request-id")!;
    await res.text();
    const rows = await pollUntil(() => g.query("SELECT status, CAST(input_tokens AS DOUBLE PRECISION) AS input_tokens, CAST(output_tokens AS DOUBLE PRECISION) AS output_tokens FROM usage_ledger WHERE request_id = $1", requestId), (r) => r.length > 0);
    expect(rows.value).toEqual([{ status: 200, input_tokens: 11, output_tokens: 7 }]);
    const lines = g.logs.filter((l) => l.includes(requestId));
    expect(lines.some((l) => l.includes('"account":"a"') && l.includes("failed before any content"))).toBe(true);
    expect(lines.some((l) => l.includes('"msg":"request"') && l.includes('"account":"b"'))).toBe(true);
    expect(g.logs.join("\n")).not.toContain("upstream-key-");
    // Every attempt's in-flight count came back.
    await pollUntil(async () => [...(await g.deps.poolState.read(["a", "b"])).values()].map((h) => h.inFlight), (v) => v.every((n) => n === 0), { what: "in flight back to 0" });
  });
});

describe("cooldowns", () => {
  let g: Gantry;
  let up: FakeUpstream[];
  let close: () => Promise<void>;
  let key: string;
  beforeAll(async () => {
    const f = await startFakeUpstreams([{ priority: 1 }, { priority: 2 }]);
    up = f.upstreams;
    close = f.close;
    g = await startGantry({ now, config: { upstreams: f.accounts, upstreamKey: "" } });
    key = await g.createKey();
  });
  afterAll(async () => {
    await g.stop();
    await close();
  });
  const p = pool(() => g, () => up);
  afterEach(() => p.reset());

  const okFrom = async (res: Response) => {
    expect(res.status).toBe(200);
    await res.text();
  };

  test("a cooled account is not tried until its deadline; a later, longer Retry-After extends it", async () => {
    up[0]!.setScenario({ kind: "status", status: 429, headers: { "retry-after": "5" } });
    await okFrom(await ask(g, key));
    expect([posts(up[0]!), posts(up[1]!)]).toEqual([1, 1]);
    await okFrom(await ask(g, key));
    expect([posts(up[0]!), posts(up[1]!)]).toEqual([1, 2]);
    offset += 6000;
    up[0]!.setScenario({ kind: "status", status: 429, headers: { "x-ratelimit-reset-requests": "1m0s", "retry-after": "2" } });
    await okFrom(await ask(g, key));
    expect(posts(up[0]!)).toBe(2);
    offset += 30_000;
    await okFrom(await ask(g, key));
    expect(posts(up[0]!)).toBe(2);
    offset += 31_000;
    up[0]!.setScenario();
    await okFrom(await ask(g, key));
    expect(posts(up[0]!)).toBe(3);
  });

  test("a rate limit that names the model cools the account for that model only", async () => {
    up[0]!.setScenario((body) =>
      body.model === "gpt-5.4"
        ? { kind: "status", status: 429, headers: { "retry-after": "30" }, body: { error: { message: "Rate limit reached for gpt-5.4 in organization org-x on requests per min.", type: "requests", code: "rate_limit_exceeded", param: null } } }
        : { kind: "text", text: "mini from a" },
    );
    await okFrom(await ask(g, key));
    expect([posts(up[0]!), posts(up[1]!)]).toEqual([1, 1]);
    const mini = await ask(g, key, { model: "gpt-5.4-mini" });
    expect(mini.status).toBe(200);
    expect(await mini.text()).toContain("mini from a");
    await okFrom(await ask(g, key));
    expect([posts(up[0]!), posts(up[1]!)]).toEqual([2, 2]);
    const health = (await g.deps.poolState.read(["a"])).get("a")!;
    expect(health.coolingUntil).toBeNull();
    expect(Object.keys(health.modelCoolingUntil)).toEqual(["gpt-5.4"]);
  });

  test("every account cooling for its rate limit: 429 with Retry-After the soonest return, without asking upstream again", async () => {
    up[0]!.setScenario({ kind: "status", status: 429, headers: { "retry-after": "20" } });
    up[1]!.setScenario({ kind: "status", status: 429, headers: { "retry-after-ms": "7000" } });
    const first = await ask(g, key);
    expect(first.status).toBe(429);
    expect(first.headers.get("retry-after")).toBe("7");
    expect((await first.json()).error.code).toBe("upstream_rate_limited");
    const second = await ask(g, key);
    expect(second.status).toBe(429);
    expect(Number(second.headers.get("retry-after"))).toBeLessThanOrEqual(7);
    await second.text();
    expect([posts(up[0]!), posts(up[1]!)]).toEqual([1, 1]);
  });

  test("every account failing: 503 with Retry-After", async () => {
    up[0]!.setScenario({ kind: "status", status: 500 });
    up[1]!.setScenario({ kind: "status", status: 502 });
    const res = await ask(g, key);
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await res.json()).error.code).toBe("upstream_unavailable");
  });

  test("an account refused for its key is out until a probe succeeds, then back", async () => {
    up[0]!.setScenario({ kind: "status", status: 401 });
    await okFrom(await ask(g, key));
    up[0]!.setScenario();
    for (let i = 0; i < 3; i++) await okFrom(await ask(g, key));
    expect(posts(up[0]!)).toBe(1);
    expect((await g.deps.poolState.read(["a"])).get("a")!.disabled).toEqual({ reason: "auth", manual: false });
    offset += 61_000;
    await okFrom(await ask(g, key)); // the probe
    expect(posts(up[0]!)).toBe(2);
    expect((await g.deps.poolState.read(["a"])).get("a")!.disabled).toBeNull();
    await okFrom(await ask(g, key));
    expect(posts(up[0]!)).toBe(3);
  });

  test("server errors over the window's threshold take an account out; after its rest one probe request goes through, the others go elsewhere", async () => {
    up[0]!.setScenario({ kind: "status", status: 500 });
    for (let i = 0; i < 5; i++) await okFrom(await ask(g, key));
    expect(posts(up[0]!)).toBe(5);
    await okFrom(await ask(g, key));
    expect(posts(up[0]!)).toBe(5);
    offset += 31_000;
    // The probe is slow to its first content: the calls made meanwhile do not wait for it, nor join it.
    up[0]!.setScenario({ kind: "slow", delayMs: 300, text: "probe answer", deltas: 2 });
    const probe = ask(g, key);
    await pollUntil(() => up[0]!.open, (n) => n === 1, { what: "the probe reaching a" });
    const others = await Promise.all([ask(g, key), ask(g, key)]);
    for (const r of others) await okFrom(r);
    expect(posts(up[0]!)).toBe(6);
    await okFrom(await probe);
    up[0]!.setScenario();
    await okFrom(await ask(g, key));
    expect(posts(up[0]!)).toBe(7);
  });
});

describe("choice", () => {
  let g: Gantry;
  let up: FakeUpstream[];
  let close: () => Promise<void>;
  let key: string;
  beforeAll(async () => {
    const f = await startFakeUpstreams([{ priority: 1, weight: 3 }, { priority: 1, weight: 1 }, { priority: 2, weight: 5 }]);
    up = f.upstreams;
    close = f.close;
    g = await startGantry({ config: { upstreams: f.accounts, upstreamKey: "" } });
    key = await g.createKey();
  });
  afterAll(async () => {
    await g.stop();
    await close();
  });

  test("the best priority tier only, shared by weight across prompt cache keys; one key keeps its account", async () => {
    for (let i = 0; i < 120; i++) {
      const res = await ask(g, key, { prompt_cache_key: `user-${i}` });
      expect(res.status).toBe(200);
      await res.text();
    }
    const [a, b, c] = up.map(posts);
    expect(c).toBe(0);
    expect(a! + b!).toBe(120);
    expect(a! / 120).toBeGreaterThan(0.6);
    expect(a! / 120).toBeLessThan(0.9);
    const before = up.map(posts);
    for (let i = 0; i < 6; i++) await (await ask(g, key, { prompt_cache_key: "same-user" })).text();
    const moved = up.map((u, i) => posts(u) - before[i]!);
    expect(moved.filter((n) => n > 0)).toHaveLength(1);
  });

});

describe("/v1/models", () => {
  test("the union of the accounts' lists; an account whose list fails is left out", async () => {
    const f = await startFakeUpstreams([{ models: ["m-a", "shared"] }, { models: ["m-b", "shared"] }]);
    const dead = { ...f.accounts[0]!, name: "dead", url: "http://127.0.0.1:9/v1" };
    const g = await startGantry({ config: { upstreams: [...f.accounts, dead], upstreamKey: "", modelsCacheSeconds: 0 } });
    try {
      const key = await g.createKey();
      const res = await fetch(`${g.url}/v1/models`, authed(key));
      expect(res.status).toBe(200);
      expect(((await res.json()).data as Array<{ id: string }>).map((m) => m.id).sort()).toEqual(["m-a", "m-b", "shared"]);
    } finally {
      await g.stop();
      await f.close();
    }
  });
});

describe("sticky routing", () => {
  let g: Gantry;
  let up: FakeUpstream[];
  let close: () => Promise<void>;
  let key: string;
  beforeAll(async () => {
    const f = await startFakeUpstreams([{}, {}]);
    up = f.upstreams;
    close = f.close;
    g = await startGantry({ config: { upstreams: f.accounts, upstreamKey: "" } });
    key = await g.createKey();
  });
  afterAll(async () => {
    await g.stop();
    await close();
  });

  const turn = async (extra: Record<string, unknown>) => {
    const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "gpt-5.4", input: "next", store: true, tools: [{ type: "function", name: "lookup", parameters: { type: "object", properties: {} } }], ...extra }));
    expect(res.status).toBe(200);
    return (await res.json()) as { id: string; output: Array<{ type: string; encrypted_content?: string }> };
  };
  /** Which upstream got the last request, and what it got. */
  const lastOf = () => {
    const last = up.map((u, i) => ({ i, r: u.requests.filter((q) => q.path === "/v1/responses").at(-1) })).filter((x) => x.r);
    return last;
  };
  const which = (before: number[]) => up.findIndex((u, i) => posts(u) > before[i]!);

  test("a continuation goes back to the account that produced the response, whatever its prompt cache key; elsewhere only when that one is out, without its encrypted reasoning", async () => {
    up.forEach((u) => u.setScenario({ kind: "reasoning-call", encrypted: true }));
    let before = up.map(posts);
    const first = await turn({ prompt_cache_key: "k-0" });
    const home = which(before);
    expect(first.output.some((it) => it.type === "reasoning" && it.encrypted_content)).toBe(true);
    // A prompt cache key that, alone, would go to the other account.
    let other = "";
    for (let i = 1; i < 64 && !other; i++) {
      before = up.map(posts);
      await turn({ prompt_cache_key: `k-${i}` });
      if (which(before) !== home) other = `k-${i}`;
    }
    expect(other).not.toBe("");
    before = up.map(posts);
    await turn({ previous_response_id: first.id, prompt_cache_key: other });
    expect(which(before)).toBe(home);
    const sentHome = up[home]!.requests.filter((q) => q.path === "/v1/responses").at(-1)!.body;
    expect(sentHome.input.some((it: any) => it.type === "reasoning" && it.encrypted_content)).toBe(true);
    // The home account cools: the continuation goes to the other, without the reasoning it could not read.
    await g.deps.poolState.cool(g.deps.accounts[home]!.name, null, Date.now() + 60_000, "rate_limited");
    before = up.map(posts);
    await turn({ previous_response_id: first.id, prompt_cache_key: other });
    const away = which(before);
    expect(away).not.toBe(home);
    const sentAway = up[away]!.requests.filter((q) => q.path === "/v1/responses").at(-1)!.body;
    expect(sentAway.input.some((it: any) => it.type === "reasoning" && it.encrypted_content)).toBe(false);
    expect(sentAway.input.some((it: any) => it.type === "function_call")).toBe(true);
    expect(lastOf().length).toBe(2);
  });
});

describe("a slow first token", () => {
  test("an account silent for a keep-alive interval before its first content keeps the call: the caller gets its headers and the opening events", async () => {
    const f = await startFakeUpstreams([{ priority: 1, scenario: { kind: "hang-mid-stream", afterEvents: 2 } }, { priority: 2 }]);
    const g = await startGantry({ config: { upstreams: f.accounts, upstreamKey: "", keepAliveSeconds: 1 } });
    const abort = new AbortController();
    try {
      const key = await g.createKey();
      const res = await fetch(`${g.url}/v1/responses`, { ...authed(key, { model: "gpt-5.4", input: "hello", stream: true, store: false }), signal: abort.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let text = "";
      while (!text.includes("response.in_progress")) text += new TextDecoder().decode((await reader.read()).value);
      expect(text).toContain("response.created");
      expect(posts(f.upstreams[1]!)).toBe(0);
    } finally {
      abort.abort();
      await g.stop();
      await f.close();
    }
  });
});

describe("account limits and model maps", () => {
  test("an account at its max_concurrency is skipped while it is full; its model map names the model it is sent", async () => {
    const f = await startFakeUpstreams([{ priority: 1, maxConcurrency: 1, modelMap: { "gpt-5.4": "gpt-5.4-2026-03" } }, { priority: 2 }]);
    const g = await startGantry({ config: { upstreams: f.accounts, upstreamKey: "" } });
    try {
      const key = await g.createKey();
      f.upstreams[0]!.setScenario({ kind: "slow", delayMs: 150, deltas: 3 });
      const first = ask(g, key);
      await pollUntil(() => f.upstreams[0]!.open, (n) => n === 1, { what: "a's one stream" });
      const second = await ask(g, key);
      expect(second.status).toBe(200);
      await second.text();
      expect(posts(f.upstreams[1]!)).toBe(1);
      await (await first).text();
      expect(f.upstreams[0]!.requests.find((r) => r.path === "/v1/responses")!.body.model).toBe("gpt-5.4-2026-03");
      expect(f.upstreams[1]!.requests.find((r) => r.path === "/v1/responses")!.body.model).toBe("gpt-5.4");
    } finally {
      await g.stop();
      await f.close();
    }
  });
});

describe("a caller that leaves while the opening is held", () => {
  test("the held upstream stream is closed, nothing fails over, the account's in-flight count comes back and the call is settled 499", async () => {
    const f = await startFakeUpstreams([{ priority: 1, scenario: { kind: "hang-mid-stream", afterEvents: 2 } }, { priority: 2 }]);
    const g = await startGantry({ config: { upstreams: f.accounts, upstreamKey: "", keepAliveSeconds: 600 } });
    try {
      const key = await g.createKey();
      const abort = new AbortController();
      const res = fetch(`${g.url}/v1/responses`, { ...authed(key, { model: "gpt-5.4", input: "hello", stream: true, store: false }), signal: abort.signal }).catch(() => null);
      await pollUntil(() => f.upstreams[0]!.written, (n) => n >= 2, { what: "a's opening events sent" });
      abort.abort();
      await res;
      await pollUntil(() => f.upstreams[0]!.open, (n) => n === 0, { what: "a's stream closed" });
      await pollUntil(async () => (await g.deps.poolState.read(["a"])).get("a")!.inFlight, (n) => n === 0, { what: "a's in-flight back to 0" });
      const rows = await pollUntil(() => g.query("SELECT status, error_code FROM usage_ledger"), (r) => r.length > 0);
      expect(rows.value).toEqual([{ status: 499, error_code: "client_closed" }]);
      expect(posts(f.upstreams[1]!)).toBe(0);
    } finally {
      await g.stop();
      await f.close();
    }
  });
});
