import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { mapUpstreamError } from "../../src/gateway/upstream/upstream-errors";
import { ParameterQuirks, unsupportedParameter, withoutParams } from "../../src/gateway/upstream/unsupported-params";
import { MAX_REFUSED_RETRIES, postResponses } from "../../src/gateway/upstream/post-responses";
import type { RefusedParam, RefusedParamRepository } from "../../src/gateway/upstream/refused-params-repository";
import { upstreamIdentity } from "../../src/gateway/upstream/refused-params-repository";
import type { UpstreamReply } from "../../src/gateway/upstream/upstream";
import { pollUntil } from "../support/poll";

describe("unsupportedParameter", () => {
  test("reads the FastAPI and the OpenAI wordings of an upstream 400", () => {
    expect(unsupportedParameter(mapUpstreamError(400, JSON.stringify({ detail: "Unsupported parameter: temperature" }), null))).toBe("temperature");
    const openai = { error: { message: "Unsupported parameter: 'top_p' is not supported with this model.", type: "invalid_request_error", param: "top_p", code: "unsupported_parameter" } };
    expect(unsupportedParameter(mapUpstreamError(400, JSON.stringify(openai), null))).toBe("top_p");
    expect(unsupportedParameter(mapUpstreamError(400, JSON.stringify({ error: { message: "x", code: "unsupported_parameter", param: "max_output_tokens" } }), null))).toBe("max_output_tokens");
  });

  test("nothing else: other statuses and messages, and parameters a request cannot do without", () => {
    expect(unsupportedParameter(mapUpstreamError(500, JSON.stringify({ detail: "Unsupported parameter: temperature" }), null))).toBeNull();
    expect(unsupportedParameter(mapUpstreamError(400, JSON.stringify({ detail: "Stream must be set to true" }), null))).toBeNull();
    expect(unsupportedParameter(mapUpstreamError(400, JSON.stringify({ detail: "Unsupported parameter: input" }), null))).toBeNull();
    expect(unsupportedParameter(mapUpstreamError(400, JSON.stringify({ detail: "Unsupported parameter: model" }), null))).toBeNull();
    expect(unsupportedParameter(new Error("Unsupported parameter: temperature"))).toBeNull();
    expect(unsupportedParameter(new AppError("invalid_request", "Unsupported parameter: '; DROP"))).toBeNull();
  });
});

describe("withoutParams and ParameterQuirks", () => {
  test("drops only what is there, without touching the original", () => {
    const req: Record<string, unknown> = { model: "m", temperature: 1, top_p: 0.5 };
    const { request, dropped } = withoutParams(req, ["temperature", "seed"]);
    expect(request).toEqual({ model: "m", top_p: 0.5 });
    expect(dropped).toEqual(["temperature"]);
    expect(req.temperature).toBe(1);
    expect(withoutParams(req, ["seed"]).request).toBe(req);
  });

  test("learns per model, tells once, and always drops the configured ones", () => {
    const told: string[] = [];
    const q = new ParameterQuirks(["top_p"], (m, p) => told.push(`${m}:${p}`));
    q.learn("a", "temperature");
    q.learn("a", "temperature");
    expect(q.droppedFor("a")).toEqual(["top_p", "temperature"]);
    expect(q.droppedFor("b")).toEqual(["top_p"]);
    expect(told).toEqual(["a:temperature"]);
  });
});

/** An upstream that refuses, one at a time, the first parameter of `refuses` the body has (as the fake upstream does), and records the bodies. */
function refusingUpstream(refuses: (body: Record<string, unknown>) => string | null) {
  const bodies: Record<string, unknown>[] = [];
  return {
    bodies,
    upstream: {
      async postResponses(json: string): Promise<UpstreamReply> {
        const body = JSON.parse(json);
        bodies.push(body);
        const param = refuses(body);
        if (param !== null) throw mapUpstreamError(400, JSON.stringify({ detail: `Unsupported parameter: ${param}` }), null);
        return { response: new Response("ok"), ttfbMs: 1 };
      },
    },
  };
}
const firstOf = (names: string[]) => (body: Record<string, unknown>) => names.find((n) => n in body) ?? null;
const signal = new AbortController().signal;

describe("postResponses: dropping refused parameters in turn", () => {
  test("each refusal names a new parameter: all dropped, the call answered, each learnt once", async () => {
    const { upstream, bodies } = refusingUpstream(firstOf(["temperature", "top_p", "service_tier"]));
    const quirks = new ParameterQuirks([]);
    const posted = await postResponses({ upstream, quirks }, "m", { model: "m", input: "hi", temperature: 1, top_p: 1, service_tier: "auto", user: "u" }, signal);
    expect(bodies.map((b) => Object.keys(b))).toEqual([
      ["model", "input", "temperature", "top_p", "service_tier", "user"],
      ["model", "input", "top_p", "service_tier", "user"],
      ["model", "input", "service_tier", "user"],
      ["model", "input", "user"],
    ]);
    expect(posted.dropped).toEqual(["temperature", "top_p", "service_tier"]);
    expect(posted.sent).toEqual({ model: "m", input: "hi", user: "u" });
    expect(JSON.parse(posted.sentJson)).toEqual(posted.sent);
    expect(quirks.droppedFor("m")).toEqual(["temperature", "top_p", "service_tier"]);
  });

  test(`bounded: at most ${MAX_REFUSED_RETRIES} retries, then the refusal reaches the caller`, async () => {
    const names = Array.from({ length: MAX_REFUSED_RETRIES + 3 }, (_, i) => `p${i}`);
    const { upstream, bodies } = refusingUpstream(firstOf(names));
    const request = Object.fromEntries([["model", "m"], ...names.map((n) => [n, 1])]);
    const err = await postResponses({ upstream, quirks: new ParameterQuirks([]) }, "m", request, signal).catch((e) => e);
    expect(unsupportedParameter(err)).toBe(`p${MAX_REFUSED_RETRIES}`);
    expect(bodies).toHaveLength(MAX_REFUSED_RETRIES + 1);
  });

  test("a refusal naming a parameter already dropped (or never sent) stops at once", async () => {
    let calls = 0;
    // Refuses temperature, then claims top_p is still there, then temperature again although it is gone.
    const { upstream, bodies } = refusingUpstream(() => ["temperature", "top_p", "temperature"][calls++] ?? null);
    const err = await postResponses({ upstream, quirks: new ParameterQuirks([]) }, "m", { model: "m", temperature: 1, top_p: 1 }, signal).catch((e) => e);
    expect(unsupportedParameter(err)).toBe("temperature");
    expect(bodies.map((b) => Object.keys(b))).toEqual([["model", "temperature", "top_p"], ["model", "top_p"], ["model"]]);
    const never = refusingUpstream(() => "seed");
    await expect(postResponses({ upstream: never.upstream, quirks: new ParameterQuirks([]) }, "m", { model: "m" }, signal)).rejects.toThrow("seed");
    expect(never.bodies).toHaveLength(1);
  });

  test("other refusals are not retried", async () => {
    let calls = 0;
    const upstream = {
      async postResponses(): Promise<UpstreamReply> {
        calls++;
        throw mapUpstreamError(400, JSON.stringify({ detail: "Stream must be set to true" }), null);
      },
    };
    await expect(postResponses({ upstream, quirks: new ParameterQuirks([]) }, "m", { model: "m", temperature: 1 }, signal)).rejects.toThrow("Stream must be set");
    expect(calls).toBe(1);
  });
});

/** A RefusedParamRepository in memory, counting writes. */
function memoryRepository(rows: Array<RefusedParam & { upstream: string }> = []): RefusedParamRepository & { rows: typeof rows; fail?: boolean } {
  return {
    rows,
    async list(upstream) {
      return rows.filter((r) => r.upstream === upstream).map(({ model, param }) => ({ model, param }));
    },
    async add(upstream, model, param) {
      if (this.fail) throw new Error("disk full");
      rows.push({ upstream, model, param });
    },
  };
}

describe("ParameterQuirks with a store", () => {
  test("loads this upstream's parameters at start; learning writes each new one once, keyed by the upstream", async () => {
    const repo = memoryRepository([
      { upstream: "https://up.example/v1", model: "a", param: "top_p" },
      { upstream: "https://elsewhere.example/v1", model: "a", param: "seed" },
    ]);
    const told: string[] = [];
    const q = new ParameterQuirks(["user"], (m, p) => told.push(`${m}:${p}`), { repository: repo, upstream: "https://up.example/v1", now: () => 5 });
    expect(await q.load()).toBe(1);
    expect(q.droppedFor("a")).toEqual(["user", "top_p"]);
    q.learn("a", "top_p");
    q.learn("a", "temperature");
    q.learn("a", "temperature");
    expect(told).toEqual(["a:temperature"]);
    expect(repo.rows.filter((r) => r.upstream === "https://up.example/v1").map((r) => `${r.model}:${r.param}`)).toEqual(["a:top_p", "a:temperature"]);
  });

  test("a failed write is reported and the parameter still applies in memory", async () => {
    const repo = memoryRepository();
    repo.fail = true;
    const errors: string[] = [];
    const q = new ParameterQuirks([], undefined, { repository: repo, upstream: "u", now: () => 0, onWriteError: (e, m, p) => errors.push(`${m}:${p}:${(e as Error).message}`) });
    q.learn("a", "top_p");
    await pollUntil(() => errors.length, (n) => n > 0, { what: "the write error to be reported" });
    expect(errors).toEqual(["a:top_p:disk full"]);
    expect(q.droppedFor("a")).toEqual(["top_p"]);
  });

  test("upstreamIdentity: one name per upstream, without credentials, query or trailing slash", () => {
    expect(upstreamIdentity("https://api.example.com/v1/")).toBe("https://api.example.com/v1");
    expect(upstreamIdentity("https://user:secret@api.example.com/v1?x=1")).toBe("https://api.example.com/v1");
    expect(upstreamIdentity("http://127.0.0.1:8080/v1")).toBe("http://127.0.0.1:8080/v1");
    expect(upstreamIdentity("")).toBe("");
  });
});
