import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { mapUpstreamError } from "../../src/gateway/upstream/upstream-errors";
import { ParameterQuirks, unsupportedParameter, withoutParams } from "../../src/gateway/upstream/unsupported-params";

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
