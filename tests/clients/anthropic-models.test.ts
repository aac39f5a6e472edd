/**
 * `client.models.list()` of the official `@anthropic-ai/sdk` against a running Gantry: Anthropic's list shape (the
 * request carries `anthropic-version`), the key in `x-api-key`, the operator's exact alias names first, pages
 * walked with `after_id`, and the SDK's own error classes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic, { AuthenticationError } from "@anthropic-ai/sdk";
import { startPoolOfTwo, type FakeUpstream } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
/** Every test runs through a pool of two whose first account always fails before content. */
let pool: Awaited<ReturnType<typeof startPoolOfTwo>>;
let g: Gantry;

beforeAll(async () => {
  pool = await startPoolOfTwo({ models: ["gpt-5.4", "gpt-5.2", "gpt-5-mini"] });
  upstream = pool.upstream;
  g = await startGantry({
    config: { ...pool.config, modelAliases: { "claude-opus-4-6": "gpt-5.4", "claude-sonnet-4-5": "gpt-5.2", "claude-haiku-*": "gpt-5-mini" } },
  });
});
afterAll(async () => {
  await g.stop();
  await pool.close();
});

const sdk = (apiKey: string) => new Anthropic({ baseURL: g.url, apiKey, maxRetries: 0 });

describe("@anthropic-ai/sdk models.list through Gantry", () => {
  test("every model the key may use, alias names first, in ModelInfo's shape", async () => {
    const models = [];
    for await (const m of sdk(await g.createKey()).models.list()) models.push(m);
    expect(models.map((m) => m.id)).toEqual(["claude-opus-4-6", "claude-sonnet-4-5", "gpt-5.4", "gpt-5.2", "gpt-5-mini"]);
    expect(models[0].type).toBe("model");
    expect(models[0].display_name).toBe("claude-opus-4-6 (gpt-5.4)");
    expect(Number.isNaN(Date.parse(models[0].created_at))).toBe(false);
  });

  test("pages of one, walked by the SDK with after_id; a key's model list filters the names", async () => {
    const key = await g.createKey({ modelMode: "allow", models: ["claude-*"] });
    const page = await sdk(key).models.list({ limit: 1 });
    expect(page.data.map((m) => m.id)).toEqual(["claude-opus-4-6"]);
    expect(page.has_more).toBe(true);
    const all = [];
    for await (const m of sdk(key).models.list({ limit: 1 })) all.push(m.id);
    expect(all).toEqual(["claude-opus-4-6", "claude-sonnet-4-5"]);
  });

  test("a wrong key is the SDK's AuthenticationError (Anthropic's envelope)", async () => {
    const err = await sdk("gk-not-a-key").models.list().catch((e) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.error).toMatchObject({ type: "error", error: { type: "authentication_error" } });
  });

  test("without anthropic-version the list keeps OpenAI's shape", async () => {
    const res = await fetch(`${g.url}/v1/models`, { headers: { authorization: `Bearer ${await g.createKey()}` } });
    const body = (await res.json()) as any;
    expect(body.object).toBe("list");
    expect(body.data.map((m: any) => m.id)).toEqual(["claude-opus-4-6", "claude-sonnet-4-5", "gpt-5.4", "gpt-5.2", "gpt-5-mini"]);
    expect(body.data[0]).toMatchObject({ id: "claude-opus-4-6", object: "model" });
  });
});
