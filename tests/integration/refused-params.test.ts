/**
 * An upstream that refuses several parameters (issue 30): LlamaIndex's chat class always sends temperature and top_p,
 * and a model refusing both used to fail with "Unsupported parameter: top_p" (one drop, one retry). Gantry drops each
 * parameter the upstream names in turn and answers the first call; what it learnt is kept in the store, so after a
 * restart on the same data (SQLite file, or PostgreSQL with GANTRY_TEST_BACKEND=shared) the first call sends none of
 * them and nothing is learnt again.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { readSseData, startGantry, TEST_BACKEND, type Gantry } from "../support/harness";
import { freshDatabase } from "../support/postgres";
import { tempDirs } from "../support/temp-dirs";

const REFUSED = ["temperature", "top_p", "service_tier"];
const tempDir = tempDirs();

let upstream: FakeUpstream;
/** The same store for every start: a SQLite file, or one PostgreSQL database on the shared backend. */
let storeOptions: { databasePath?: string; databaseUrl?: string };
let dropDatabase = async () => {};
let g: Gantry | null = null;

beforeAll(async () => {
  upstream = await startFakeUpstream({ unsupportedParams: REFUSED, scenario: { kind: "text", text: "fine" } });
  if (TEST_BACKEND === "shared") {
    const db = await freshDatabase();
    storeOptions = { databaseUrl: db.url };
    dropDatabase = db.drop;
  } else storeOptions = { databasePath: join(tempDir("refused-params"), "gantry.db") };
});
afterAll(async () => {
  await g?.stop();
  await dropDatabase();
  await upstream.close();
});

async function start(): Promise<{ gantry: Gantry; key: string }> {
  await g?.stop();
  g = await startGantry({ config: { upstreamUrl: upstream.url }, captureLogs: true, ...storeOptions });
  return { gantry: g, key: await g.createKey() };
}

function post(gantry: Gantry, key: string, path: string, body: object): Promise<Response> {
  return fetch(`${gantry.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** The bodies the upstream received for requests made by `fn`, each as the refused parameters it carried. */
async function refusedSent(fn: () => Promise<void>): Promise<string[][]> {
  const before = upstream.requests.length;
  await fn();
  return upstream.requests.slice(before).filter((r) => r.path.endsWith("/responses")).map((r) => REFUSED.filter((p) => p in r.body));
}

const learnt = (gantry: Gantry) => gantry.logs.map((l) => JSON.parse(l)).filter((l) => String(l.msg).includes("refuses a parameter"));
const everything = { temperature: 0.2, top_p: 0.9, service_tier: "auto" };

describe("several refused parameters", () => {
  test("three refused: the first call is answered, each named parameter dropped in turn; the next call sends none", async () => {
    const { gantry, key } = await start();
    const first = await refusedSent(async () => {
      const res = await post(gantry, key, "/v1/responses", { model: "gpt-strict", input: "hi", stream: true, ...everything });
      expect(res.status).toBe(200);
      expect((await readSseData(res)).at(-1).type).toBe("response.completed");
    });
    expect(first).toEqual([REFUSED, ["top_p", "service_tier"], ["service_tier"], []]);
    const next = await refusedSent(async () => {
      expect((await post(gantry, key, "/v1/responses", { model: "gpt-strict", input: "again", ...everything })).status).toBe(200);
    });
    expect(next).toEqual([[]]);
    expect(learnt(gantry).map((l) => `${l.model}:${l.param}`)).toEqual(REFUSED.map((p) => `gpt-strict:${p}`));
  });

  test("chat with temperature and top_p (as LlamaIndex sends them) to another model: answered on the first call", async () => {
    const { gantry, key } = g ? { gantry: g, key: await g.createKey() } : await start();
    const bodies = await refusedSent(async () => {
      const res = await post(gantry, key, "/v1/chat/completions", { model: "gpt-chat-strict", messages: [{ role: "user", content: "hi" }], temperature: 0.1, top_p: 1 });
      expect(res.status).toBe(200);
      expect((await res.json()).choices[0].message.content).toBe("fine");
    });
    expect(bodies).toEqual([["temperature", "top_p"], ["top_p"], []]);
  });

  test("after a restart on the same store, the first call sends none of them and nothing is learnt again", async () => {
    const { gantry, key } = await start();
    const bodies = await refusedSent(async () => {
      expect((await post(gantry, key, "/v1/responses", { model: "gpt-strict", input: "hi", ...everything })).status).toBe(200);
      expect((await post(gantry, key, "/v1/chat/completions", { model: "gpt-chat-strict", messages: [{ role: "user", content: "hi" }], temperature: 0.1, top_p: 1 })).status).toBe(200);
    });
    expect(bodies).toEqual([[], []]);
    expect(learnt(gantry)).toEqual([]);
    // Learnt per model: one never refused before still sends what it is given, and learns for itself.
    const other = await refusedSent(async () => {
      expect((await post(gantry, key, "/v1/responses", { model: "gpt-new", input: "hi", top_p: 0.5 })).status).toBe(200);
    });
    expect(other).toEqual([["top_p"], []]);
  });
});
