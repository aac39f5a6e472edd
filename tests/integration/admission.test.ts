/** Admission over real HTTP: every error code, the order of checks, nothing consumed on refusal, leases. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";

let upstream: FakeUpstream;
let g: Gantry;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({ config: { upstreamUrl: upstream.url } });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

const hello = { model: "demo-mini", input: "hello" };

async function errorOf(res: Response) {
  const body = (await res.json()) as any;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(typeof body.error.message).toBe("string");
  return { status: res.status, ...body.error, headers: res.headers };
}

describe("every error code of the spec", () => {
  const hour = 3_600_000;
  test("missing_api_key 401", async () => {
    const e = await errorOf(await fetch(`${g.url}/v1/responses`, { method: "POST", body: JSON.stringify(hello) }));
    expect([e.status, e.code]).toEqual([401, "missing_api_key"]);
  });
  test("invalid_api_key 401", async () => {
    const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed("gk-not-a-key", hello)));
    expect([e.status, e.code]).toEqual([401, "invalid_api_key"]);
  });
  test("api_key_expired 401", async () => {
    const key = await g.createKey({ expiresAt: Date.now() - hour });
    const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)));
    expect([e.status, e.code]).toEqual([401, "api_key_expired"]);
  });
  test("api_key_disabled 403", async () => {
    const key = await g.createKey({ status: "disabled" });
    const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)));
    expect([e.status, e.code]).toEqual([403, "api_key_disabled"]);
  });
  test("model_not_allowed 403, whitelist and blacklist", async () => {
    const white = await g.createKey({ modelMode: "allow", models: ["other-*"] });
    const black = await g.createKey({ modelMode: "deny", models: ["demo-*"] });
    for (const key of [white, black]) {
      const e = await errorOf(await fetch(`${g.url}/v1/chat/completions`, authed(key, { model: "demo-mini", messages: [{ role: "user", content: "x" }] })));
      expect([e.status, e.code, e.param]).toEqual([403, "model_not_allowed", "model"]);
    }
  });
  test("quota_exceeded 429 with Retry-After and no SDK retry", async () => {
    const key = await g.createKey({ quotaTokens: 0 });
    const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)));
    expect([e.status, e.code, e.type]).toEqual([429, "quota_exceeded", "insufficient_quota"]);
    expect(e.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(e.headers.get("x-should-retry")).toBe("false");
  });
  test("rate_limit_rpm 429", async () => {
    const key = await g.createKey({ rpm: 1 });
    expect((await fetch(`${g.url}/v1/responses`, authed(key, hello))).status).toBe(200);
    const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)));
    expect([e.status, e.code, e.type]).toEqual([429, "rate_limit_rpm", "invalid_request_error"]);
    expect(Number(e.headers.get("retry-after"))).toBeGreaterThanOrEqual(59);
    expect(e.headers.get("x-ratelimit-remaining-requests")).toBe("0");
  });
  test("rate_limit_rpd 429", async () => {
    const key = await g.createKey({ rpd: 1 });
    expect((await fetch(`${g.url}/v1/responses`, authed(key, hello))).status).toBe(200);
    const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)));
    expect([e.status, e.code]).toEqual([429, "rate_limit_rpd"]);
    expect(e.headers.get("retry-after")).not.toBeNull();
  });
  test("concurrent_limit 429, worth a retry in a second", async () => {
    upstream.setScenario({ kind: "slow", delayMs: 30, text: "one two three four", deltas: 4 });
    const key = await g.createKey({ concurrency: 1 });
    const holding = await fetch(`${g.url}/v1/responses`, authed(key, { ...hello, stream: true }));
    const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)));
    await holding.text();
    upstream.setScenario();
    expect([e.status, e.code]).toEqual([429, "concurrent_limit"]);
    expect(e.headers.get("retry-after")).toBe("1");
    expect(e.headers.get("x-should-retry")).toBeNull();
  });
  test("max_tokens_exceeded 400 for every spelling", async () => {
    const key = await g.createKey({ maxTokens: 100 });
    const r1 = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, { ...hello, max_output_tokens: 101 })));
    expect([r1.status, r1.code, r1.param]).toEqual([400, "max_tokens_exceeded", "max_output_tokens"]);
    for (const param of ["max_tokens", "max_completion_tokens"]) {
      const body = { model: "demo-mini", messages: [{ role: "user", content: "x" }], [param]: 500 };
      const e = await errorOf(await fetch(`${g.url}/chat/completions`, authed(key, body)));
      expect([e.status, e.code, e.param]).toEqual([400, "max_tokens_exceeded", param]);
    }
    expect((await fetch(`${g.url}/v1/responses`, authed(key, { ...hello, max_output_tokens: 100 }))).status).toBe(200);
  });
});

describe("a limit of 0 left in the database blocks the key with valid headers", () => {
  for (const fields of [{ rpm: 0 }, { rpd: 0 }, { concurrency: 0 }, { quotaTokens: 0 }, { rpm: 5, concurrency: 0 }]) {
    test(JSON.stringify(fields), async () => {
      const key = await g.createKey(fields);
      const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)));
      expect(e.status).toBe(429);
      for (const [name, value] of e.headers) expect(`${name}: ${value}`).not.toMatch(/NaN|Infinity|undefined/);
      expect(e.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
      expect(e.headers.get("x-should-retry")).toBe("false");
      const reset = e.headers.get("x-ratelimit-reset-requests");
      if (reset !== null) expect(reset).toMatch(/^\d+(\.\d+)?(ms|s)$|^(\d+h)?\d+m[\d.]+s$/);
    });
  }
});

describe("order of the checks", () => {
  test("a disabled and expired key gets api_key_disabled", async () => {
    const key = await g.createKey({ status: "disabled", expiresAt: Date.now() - 1000 });
    expect((await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)))).code).toBe("api_key_disabled");
  });
  test("an expired key asking for a forbidden model gets api_key_expired", async () => {
    const key = await g.createKey({ expiresAt: Date.now() - 1000, modelMode: "allow", models: ["x"] });
    expect((await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)))).code).toBe("api_key_expired");
  });
  test("authentication comes before the body is looked at", async () => {
    const e = await errorOf(await fetch(`${g.url}/v1/responses`, { method: "POST", body: "{not json" }));
    expect(e.code).toBe("missing_api_key");
  });
});

describe("a refusal consumes nothing", () => {
  test("refused for concurrency: RPM and RPD untouched", async () => {
    upstream.setScenario({ kind: "slow", delayMs: 30, text: "one two three four", deltas: 4 });
    const key = await g.createKey({ rpm: 10, rpd: 10, concurrency: 1 });
    const first = await fetch(`${g.url}/v1/responses`, authed(key, { ...hello, stream: true }));
    expect(first.headers.get("x-ratelimit-remaining-requests")).toBe("9");
    for (let i = 0; i < 3; i++) {
      const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)));
      expect(e.code).toBe("concurrent_limit");
      expect(e.headers.get("x-ratelimit-remaining-requests")).toBe("9");
    }
    await first.text();
    upstream.setScenario();
    const next = await fetch(`${g.url}/v1/responses`, authed(key, hello));
    expect(next.status).toBe(200);
    expect(next.headers.get("x-ratelimit-remaining-requests")).toBe("8");
  });
  test("refused for RPD: RPM untouched", async () => {
    const key = await g.createKey({ rpm: 10, rpd: 1 });
    await fetch(`${g.url}/v1/responses`, authed(key, hello));
    for (let i = 0; i < 3; i++) {
      const e = await errorOf(await fetch(`${g.url}/v1/responses`, authed(key, hello)));
      expect(e.code).toBe("rate_limit_rpd");
      expect(e.headers.get("x-ratelimit-remaining-requests")).toBe("9");
    }
  });
  test("RPM headers count down and reset is a duration", async () => {
    const key = await g.createKey({ rpm: 5 });
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${g.url}/v1/models`, authed(key));
      expect(r.headers.get("x-ratelimit-limit-requests")).toBe("5");
      expect(r.headers.get("x-ratelimit-reset-requests")).toMatch(/^\d+(\.\d+)?(ms|s)$|^\d+m[\d.]+s$/);
      expect(r.headers.get("x-request-id")).toMatch(/^req_/);
      remaining.push(r.headers.get("x-ratelimit-remaining-requests")!);
    }
    expect(remaining).toEqual(["4", "3", "2"]);
  });
});

describe("concurrency leases", () => {
  test("with concurrency 2, twenty parallel slow streams never have more than 2 upstream", async () => {
    upstream.setScenario({ kind: "slow", delayMs: 20, text: "a b c d e f", deltas: 6 });
    const before = upstream.maxOpen;
    const key = await g.createKey({ concurrency: 2 });
    const results = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const r = await fetch(`${g.url}/v1/responses`, authed(key, { ...hello, stream: true }));
        await r.text();
        return r.status;
      }),
    );
    expect(results.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    expect(results.every((s) => s === 200 || s === 429)).toBe(true);
    expect(upstream.maxOpen - before).toBeLessThanOrEqual(2);
    upstream.setScenario();
  });

  test("clients that abort mid-stream give every slot back and close the upstream request", async () => {
    upstream.setScenario({ kind: "slow", delayMs: 200, text: "x ".repeat(50), deltas: 50 });
    const name = `abort-${Date.now()}`;
    const key = await g.createKey({ name, concurrency: 3 });
    const id = (await g.deps.keys.get(name))!.id;
    const controllers = Array.from({ length: 3 }, () => new AbortController());
    const readers = await Promise.all(
      controllers.map(async (c) => {
        const r = await fetch(`${g.url}/v1/responses`, { ...authed(key, { ...hello, stream: true }), signal: c.signal });
        expect(r.status).toBe(200);
        const reader = r.body!.getReader();
        await reader.read();
        return reader;
      }),
    );
    expect(g.deps.limiter.inFlight(id)).toBe(3);
    expect((await fetch(`${g.url}/v1/responses`, authed(key, hello))).status).toBe(429);
    for (const c of controllers) c.abort();
    for (const r of readers) await r.cancel().catch(() => {});
    // The server learns of each abort asynchronously: wait for it to have given everything back.
    await pollUntil(() => g.deps.limiter.inFlight(id) === 0 && upstream.open === 0, Boolean, { what: "leases and upstream requests to be released" });
    upstream.setScenario();
    expect((await fetch(`${g.url}/v1/responses`, authed(key, hello))).status).toBe(200);
  });
});

/**
 * Gantry's upstream fetch, counting the upstream bodies open from Gantry's side: from the request until the body
 * is read to its end, cancelled or aborted by Gantry. (The upstream learns of a close a moment later, so only this
 * side can be held to an exact count.)
 */
function countingFetch() {
  let open = 0;
  let max = 0;
  const counted = (async (input: RequestInfo | URL, init?: RequestInit) => {
    open++;
    max = Math.max(max, open);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      open--;
    };
    init?.signal?.addEventListener("abort", close, { once: true });
    try {
      const res = await fetch(input, init);
      if (!res.body) {
        close();
        return res;
      }
      const reader = res.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          try {
            const { done, value } = await reader.read();
            if (done) {
              close();
              c.close();
            } else c.enqueue(value);
          } catch (err) {
            close();
            c.error(err);
          }
        },
        cancel(reason) {
          close();
          return reader.cancel(reason);
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    } catch (err) {
      close();
      throw err;
    }
  }) as typeof fetch;
  return {
    fetch: counted,
    get open() {
      return open;
    },
    get max() {
      return max;
    },
    reset() {
      max = open;
    },
  };
}

describe("an upstream that keeps its stream open after the terminal event", () => {
  // The call is over when the terminal event arrived and the upstream body is closed: its slot is given back then,
  // before the caller's reply ends (so a caller's next call is admitted), never before (so the open upstream
  // streams never outnumber the cap).
  const chat = { model: "demo-mini", messages: [{ role: "user", content: "x" }] };
  const modes: Array<[string, string, Record<string, unknown>, Record<string, string>]> = [
    ["responses, streamed", "/v1/responses", { ...hello, stream: true }, {}],
    ["responses, not streamed", "/v1/responses", hello, {}],
    ["chat, streamed", "/v1/chat/completions", { ...chat, stream: true }, {}],
    ["raw passthrough (it relays what follows the terminal event, so the reply ends with the upstream's)", "/v1/responses", { ...hello, stream: true, instructions: "i" }, { "x-upstream-mode": "raw" }],
  ];
  let lingering: FakeUpstream;
  let counter: ReturnType<typeof countingFetch>;
  let s: Gantry;
  beforeAll(async () => {
    lingering = await startFakeUpstream({ scenario: { kind: "linger", ms: 100 } });
    counter = countingFetch();
    s = await startGantry({ config: { upstreamUrl: lingering.url }, fetch: counter.fetch });
  });
  afterAll(async () => {
    await s.stop();
    await lingering.close();
  });
  const call = async (key: string, path: string, body: Record<string, unknown>, headers: Record<string, string>) => {
    const init = authed(key, body);
    const r = await fetch(`${s.url}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), ...headers } });
    await r.text();
    return r.status;
  };
  for (const [name, path, body, headers] of modes) {
    test(name, async () => {
      // Four callers on a cap of 2, each sending its next call the moment the previous one ended (refused or not).
      const key = await s.createKey({ concurrency: 2 });
      counter.reset();
      const statuses = (
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            const out: number[] = [];
            for (let i = 0; i < 6; i++) out.push(await call(key, path, body, headers));
            return out;
          }),
        )
      ).flat();
      expect(statuses.filter((st) => st === 200).length).toBeGreaterThanOrEqual(6);
      expect(statuses.every((st) => st === 200 || st === 429)).toBe(true);
      expect(counter.max).toBeLessThanOrEqual(2);
      // One caller on a cap of 1: every call after a completed one is admitted.
      const one = await s.createKey({ concurrency: 1 });
      for (let i = 0; i < 4; i++) expect(await call(one, path, body, headers)).toBe(200);
      await pollUntil(() => lingering.open, (n) => n === 0, { what: "every upstream stream closed" });
    });
  }
});

describe("quota settles from the stream's usage", () => {
  test("tokens reported by the terminal event are counted and recorded in the ledger", async () => {
    upstream.setScenario({ kind: "text", text: "settled", usage: { input_tokens: 40, output_tokens: 60, total_tokens: 100 } });
    const name = `quota-${Date.now()}`;
    const key = await g.createKey({ name, quotaTokens: 150 });
    const id = (await g.deps.keys.get(name))!.id;
    const first = await fetch(`${g.url}/v1/responses`, authed(key, { ...hello, stream: true }));
    await first.text();
    // No wait and no flush: a reply received whole is settled before its last byte left (gateway/call.ts).
    expect((await g.deps.keys.usage(id))).toMatchObject({ requests: 1, inputTokens: 40, outputTokens: 60, tokens: 100 });
    const row = (await g.deps.ledger.recent(1, id))[0];
    expect(row).toMatchObject({ keyId: id, model: "demo-mini", endpoint: "responses", status: 200, inputTokens: 40, outputTokens: 60 });
    // 50 tokens remain: the next request is admitted and uses them up.
    expect((await fetch(`${g.url}/v1/responses`, authed(key, hello))).status).toBe(200);
    const refused = await fetch(`${g.url}/v1/responses`, authed(key, hello));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error.code).toBe("quota_exceeded");
    upstream.setScenario();
  });

  test("a balance is charged at the configured prices", async () => {
    const priced = await startGantry({
      config: { upstreamUrl: upstream.url, prices: { "demo-*": { input: 1000, output: 2000 } } },
    });
    try {
      upstream.setScenario({ kind: "text", text: "x", usage: { input_tokens: 500, output_tokens: 250, total_tokens: 750 } });
      const key = await priced.createKey({ name: "b", balance: 1.5 });
      expect((await fetch(`${priced.url}/v1/responses`, authed(key, hello))).status).toBe(200);
      // No wait: the balance is charged before the reply's last byte. 500 * 1000/1M + 250 * 2000/1M = 0.5 + 0.5 = 1.0
      expect((await priced.deps.keys.usage((await priced.deps.keys.get("b"))!.id)).spent).toBeCloseTo(1.0);
      expect((await fetch(`${priced.url}/v1/responses`, authed(key, hello))).status).toBe(200);
      const e = await fetch(`${priced.url}/v1/responses`, authed(key, hello));
      expect(e.status).toBe(429);
    } finally {
      upstream.setScenario();
      await priced.stop();
    }
  });
});

describe("changes made outside the server take effect within one second", () => {
  const tempDir = tempDirs();
  /** The server reloads keys every 500 ms; measured from the CLI's exit, with room for a loaded machine. */
  const WITHIN_MS = 1100;
  test("a key created, then disabled, through another connection works, then is refused, within 1 s", async () => {
    const { join } = await import("node:path");
    const dir = tempDir("cli");
    const db = join(dir, "gantry.db");
    const server = await startGantry({ config: { upstreamUrl: upstream.url, dataDir: dir }, databasePath: db });
    try {
      const created = Bun.spawnSync(["./node_modules/.bin/bun", "src/main.ts", "keys", "create", "--name", "cli-key", "--rpm", "100", "--json", "--data-dir", dir]);
      expect(created.exitCode).toBe(0);
      const { key, id, name } = JSON.parse(created.stdout.toString());
      expect(name).toBe("cli-key");
      expect(id).toMatch(/^key_/);
      const status = async () => (await fetch(`${server.url}/v1/models`, authed(key))).status;
      // Every 401 counts as a wrong guess from this address, and ten of them slow the next: ask sparingly.
      const works = await pollUntil(status, (s) => s === 200, { stepMs: 100, what: "the new key to work" });
      expect(works.elapsedMs).toBeLessThan(WITHIN_MS);
      const disabled = Bun.spawnSync(["./node_modules/.bin/bun", "src/main.ts", "keys", "disable", "cli-key", "--data-dir", dir]);
      expect(disabled.exitCode).toBe(0);
      const refused = await pollUntil(status, (s) => s === 403, { stepMs: 20, what: "the disabled key to be refused" });
      expect(refused.elapsedMs).toBeLessThan(WITHIN_MS);
    } finally {
      await server.stop();
    }
  });
});

describe("a reply the caller received whole is already billed", () => {
  const paths: Array<[string, string, Record<string, unknown>, Record<string, string>]> = [
    ["responses, streamed", "/v1/responses", { model: "demo-mini", input: "x", stream: true }, {}],
    ["responses, not streamed", "/v1/responses", { model: "demo-mini", input: "x" }, {}],
    ["chat, streamed", "/v1/chat/completions", { model: "demo-mini", messages: [{ role: "user", content: "x" }], stream: true }, {}],
    ["chat, not streamed", "/v1/chat/completions", { model: "demo-mini", messages: [{ role: "user", content: "x" }] }, {}],
    ["raw passthrough", "/v1/responses", { model: "demo-mini", input: "x", stream: true, instructions: "i" }, { "x-upstream-mode": "raw" }],
  ];
  for (const [name, path, body, headers] of paths) {
    test(name, async () => {
      upstream.setScenario({ kind: "text", text: "billed", usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } });
      const keyName = `billed-${name}-${Math.random()}`;
      const key = await g.createKey({ name: keyName });
      const id = (await g.deps.keys.get(keyName))!.id;
      const res = await fetch(g.url + path, authed(key, body, headers));
      expect(res.status).toBe(200);
      await res.text();
      // No wait and no flush: the row must be committed before the last byte left the server.
      const rows = await g.deps.ledger.recent(10, id);
      expect(rows.map((r) => ({ input: r.inputTokens, output: r.outputTokens, status: r.status }))).toEqual([{ input: 3, output: 4, status: 200 }]);
      upstream.setScenario();
    });
  }
});

describe("guessing keys is slowed per client address", () => {
  test("after 10 free failures each wrong key waits; a valid key from the same address does not", async () => {
    const own = await startGantry({ config: { upstreamUrl: upstream.url } });
    try {
      const good = await own.createKey();
      const bad = (i: number) => fetch(`${own.url}/v1/models`, authed(`gk-guess-${i}`));
      // "Not slowed" is anything well below the 1 s a slowed guess waits: 600 ms leaves room for a loaded machine.
      for (let i = 0; i < 10; i++) {
        const t = performance.now();
        expect((await bad(i)).status).toBe(401);
        expect(performance.now() - t).toBeLessThan(600);
      }
      const t0 = performance.now();
      const slowed = await bad(10);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
      expect(((await slowed.json()) as any).error.code).toBe("invalid_api_key");
      const t1 = performance.now();
      expect((await fetch(`${own.url}/v1/models`, authed(good))).status).toBe(200);
      expect(performance.now() - t1).toBeLessThan(600);
    } finally {
      await own.stop();
    }
  });
});

describe("keys made through the admin API", () => {
  test("work on the gateway at once, and stop at once when disabled", async () => {
    const res = await g.admin("/admin/api/keys", { method: "POST", body: JSON.stringify({ name: `api-${Date.now()}` }) });
    expect(res.status).toBe(201);
    const { key, id } = (await res.json()) as any;
    expect((await fetch(`${g.url}/v1/models`, authed(key))).status).toBe(200);
    expect((await g.admin(`/admin/api/keys/${id}/disable`, { method: "POST" })).status).toBe(200);
    expect((await fetch(`${g.url}/v1/models`, authed(key))).status).toBe(403);
  });
});
