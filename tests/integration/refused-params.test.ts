/**
 * An upstream that refuses several parameters (issue 30): LlamaIndex's chat class always sends temperature and top_p,
 * and a model refusing both used to fail with "Unsupported parameter: top_p" (one drop, one retry). Gantry drops each
 * parameter the upstream names in turn and answers the first call; what it learnt is kept in the store, so after a
 * restart on the same data (SQLite file, or PostgreSQL with GANTRY_TEST_BACKEND=shared) the first call sends none of
 * them and nothing is learnt again. In a pool, each account's upstream learns for itself (two accounts may be two
 * providers): what account a refuses is still sent to account b, before and after a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeUpstream, startFakeUpstreams, type FakeUpstream } from "../support/fake-upstream";
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

describe("per account of a pool", () => {
  let pool: Awaited<ReturnType<typeof startFakeUpstreams>>;
  let pooled: { databasePath?: string; databaseUrl?: string };
  let dropPooled = async () => {};
  let pg: Gantry | null = null;
  beforeAll(async () => {
    // Account a (tried first) refuses temperature; account b honours it.
    pool = await startFakeUpstreams([
      { priority: 1, lenient: true, unsupportedParams: ["temperature"], scenario: { kind: "text", text: "from a" } },
      { priority: 2, lenient: true, scenario: { kind: "text", text: "from b" } },
    ]);
    if (TEST_BACKEND === "shared") {
      const db = await freshDatabase();
      pooled = { databaseUrl: db.url };
      dropPooled = db.drop;
    } else pooled = { databasePath: join(tempDir("refused-params-pool"), "gantry.db") };
  });
  afterAll(async () => {
    await pg?.stop();
    await dropPooled();
    await pool.close();
  });

  async function startPool(): Promise<{ gantry: Gantry; key: string }> {
    await pg?.stop();
    pg = await startGantry({ config: { upstreams: pool.accounts, upstreamKey: "" }, captureLogs: true, ...pooled });
    return { gantry: pg, key: await pg.createKey() };
  }
  /** Whether each request that reached `u` during `fn` carried temperature. */
  async function temperatureSent(u: FakeUpstream, fn: () => Promise<void>): Promise<boolean[]> {
    const before = u.requests.length;
    await fn();
    return u.requests.slice(before).filter((r) => r.path.endsWith("/responses")).map((r) => "temperature" in r.body);
  }
  const ask = async (gantry: Gantry, key: string, text: string) => {
    const res = await post(gantry, key, "/v1/responses", { model: "gpt-pooled", input: "hi", temperature: 0.3, store: false });
    expect(res.status).toBe(200);
    expect((await res.json()).output_text).toBe(text);
  };
  /** Calls while account a is out (an operator's disable), so they go to b. */
  async function onB(gantry: Gantry, fn: () => Promise<void>): Promise<void> {
    await gantry.deps.poolState.disable("a", "test", true);
    try {
      await fn();
    } finally {
      await gantry.deps.poolState.enable("a");
    }
  }
  const [a, b] = [() => pool.upstreams[0]!, () => pool.upstreams[1]!];

  test("a's refusal is learnt for a alone: b still gets temperature, a no longer does", async () => {
    const { gantry, key } = await startPool();
    expect(await temperatureSent(a(), () => ask(gantry, key, "from a"))).toEqual([true, false]);
    expect(learnt(gantry)).toHaveLength(1);
    expect(learnt(gantry)[0]).toMatchObject({ account: "a", model: "gpt-pooled", param: "temperature" });
    await onB(gantry, async () => {
      expect(await temperatureSent(b(), () => ask(gantry, key, "from b"))).toEqual([true]);
    });
    expect(await temperatureSent(a(), () => ask(gantry, key, "from a"))).toEqual([false]);
    expect(learnt(gantry)).toHaveLength(1);
  });

  test("after a restart on the same store: a starts without temperature, b still gets it", async () => {
    const { gantry, key } = await startPool();
    expect(await temperatureSent(a(), () => ask(gantry, key, "from a"))).toEqual([false]);
    await onB(gantry, async () => {
      expect(await temperatureSent(b(), () => ask(gantry, key, "from b"))).toEqual([true]);
    });
    expect(learnt(gantry)).toEqual([]);
  });
});
