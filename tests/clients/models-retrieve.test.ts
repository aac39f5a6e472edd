/**
 * `client.models.retrieve(id)` of the official `openai` and `@anthropic-ai/sdk` packages against a running Gantry:
 * each SDK's own shape, alias names (exact and by pattern) resolved to their target's entry, the key's model
 * permission applied to the name asked for, and a model unknown or forbidden alike the SDKs' NotFoundError.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { NotFoundError as OpenAINotFound } from "openai";
import Anthropic, { NotFoundError as AnthropicNotFound } from "@anthropic-ai/sdk";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
/** Denies the gpt-5-mini name: its alias names stay usable, since the permission judges the name sent. */
let narrow: string;

beforeAll(async () => {
  upstream = await startFakeUpstream({ models: ["gpt-5.4", "gpt-5.2", "gpt-5-mini"] });
  g = await startGantry({
    config: { upstreamUrl: upstream.url, modelAliases: { "claude-opus-4-6": "gpt-5.4", "claude-haiku-*": "gpt-5-mini", "claude-gone": "gpt-4-retired" } },
  });
  key = await g.createKey();
  narrow = await g.createKey({ modelMode: "deny", models: ["gpt-5-mini", "claude-opus-*"] });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

const openai = (apiKey: string) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey, maxRetries: 0 });
const anthropic = (apiKey: string) => new Anthropic({ baseURL: g.url, apiKey, maxRetries: 0 });

describe("openai models.retrieve", () => {
  test("an upstream model: OpenAI's {id, object, created, owned_by}", async () => {
    const m = await openai(key).models.retrieve("gpt-5.2");
    expect(m).toMatchObject({ id: "gpt-5.2", object: "model" });
    expect(typeof m.created).toBe("number");
    expect(typeof m.owned_by).toBe("string");
  });

  test("an alias, exact or by pattern, is its target's entry under the name asked for", async () => {
    const target = await openai(key).models.retrieve("gpt-5.4");
    expect(await openai(key).models.retrieve("claude-opus-4-6")).toEqual({ ...target, id: "claude-opus-4-6" });
    expect((await openai(key).models.retrieve("claude-haiku-4-5")).id).toBe("claude-haiku-4-5");
  });

  test("unknown, an alias whose target is not listed, and forbidden: the SDK's NotFoundError in OpenAI's envelope", async () => {
    for (const [k, id] of [
      [key, "no-such-model"],
      [key, "claude-gone"],
      [narrow, "gpt-5-mini"],
      [narrow, "claude-opus-4-6"],
    ] as const) {
      const err = await openai(k).models.retrieve(id).catch((e) => e);
      expect(err).toBeInstanceOf(OpenAINotFound);
      expect(err.status).toBe(404);
      expect(err.error).toMatchObject({ type: "not_found_error", code: "not_found", param: "model" });
    }
    // The permission judges the name sent: an alias of a denied upstream name is still the key's.
    expect((await openai(narrow).models.retrieve("claude-haiku-4-5")).id).toBe("claude-haiku-4-5");
  });

  test("the same at /models/{id}, without the /v1 prefix", async () => {
    const res = await fetch(`${g.url}/models/gpt-5.4`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).id).toBe("gpt-5.4");
  });
});

describe("@anthropic-ai/sdk models.retrieve", () => {
  test("Anthropic's ModelInfo, an alias naming its target", async () => {
    const m = await anthropic(key).models.retrieve("claude-opus-4-6");
    expect(m).toMatchObject({ type: "model", id: "claude-opus-4-6", display_name: "claude-opus-4-6 (gpt-5.4)" });
    expect(Number.isNaN(Date.parse(m.created_at))).toBe(false);
    expect((await anthropic(key).models.retrieve("gpt-5.2")).display_name).toBe("gpt-5.2");
  });

  test("unknown or forbidden: the SDK's NotFoundError, Anthropic's envelope with request-id", async () => {
    for (const [k, id] of [
      [key, "claude-nothing"],
      [narrow, "gpt-5-mini"],
    ] as const) {
      const err = await anthropic(k).models.retrieve(id).catch((e) => e);
      expect(err).toBeInstanceOf(AnthropicNotFound);
      expect(err.error).toMatchObject({ type: "error", error: { type: "not_found_error" } });
      expect(err.requestID).toMatch(/^req_/);
    }
  });
});
