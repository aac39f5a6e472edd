/**
 * A caller's X-Request-Id is echoed and logged when well-formed, but the ledger's unique id is always Gantry's own:
 * a caller cannot collide with, overwrite or suppress another call's ledger row by naming its id.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream";
import { authed, startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
let g: Gantry;
let key: string;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  g = await startGantry({ config: { upstreamUrl: upstream.url }, captureLogs: true });
  key = await g.createKey({ name: "request-ids" });
});
afterAll(async () => {
  await g.stop();
  await upstream.close();
});

const call = async (requestId?: string) => {
  const res = await fetch(`${g.url}/v1/responses`, authed(key, { model: "demo-mini", input: "hi", stream: false }, requestId === undefined ? {} : { "x-request-id": requestId }));
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status: 200 });
  return { id: res.headers.get("x-request-id")!, client: res.headers.get("x-client-request-id") };
};
const rows = (id: string) => g.query("SELECT request_id, status FROM usage_ledger WHERE request_id = $1", id);

describe("request ids", () => {
  test("a caller's id is echoed as x-client-request-id and logged; the reply's and the ledger's id is Gantry's own", async () => {
    const first = await call("dup-1");
    const second = await call("dup-1");
    for (const r of [first, second]) {
      expect(r.id).toMatch(/^req_/);
      expect(r.client).toBe("dup-1");
      expect(await rows(r.id)).toHaveLength(1);
    }
    expect(first.id).not.toBe(second.id);
    expect(await rows("dup-1")).toEqual([]);
    const lines = g.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request" && l.clientRequestId === "dup-1");
    expect(lines.map((l) => l.requestId).sort()).toEqual([first.id, second.id].sort());
  });

  test("naming another call's id neither collides with its row nor suppresses its own", async () => {
    const victim = await call();
    const [before] = await g.query("SELECT COUNT(*) AS n FROM usage_ledger");
    const attacker = await call(victim.id);
    expect(attacker.id).not.toBe(victim.id);
    expect(attacker.client).toBe(victim.id);
    expect(await rows(victim.id)).toHaveLength(1);
    expect(await rows(attacker.id)).toHaveLength(1);
    const [after] = await g.query("SELECT COUNT(*) AS n FROM usage_ledger");
    expect(Number(after.n)).toBe(Number(before.n) + 1);
  });

  test("an ill-formed id is not echoed or logged: a fresh one is used", async () => {
    for (const bad of ["x".repeat(129), "has space", "<script>", "a/b", "é"]) {
      const r = await call(bad);
      expect(r.id).toMatch(/^req_/);
      expect(r.client).toBeNull();
    }
    expect(g.logs.some((l) => l.includes("<script>") || l.includes("has space"))).toBe(false);
  });

  test("a call refused at admission is logged with its key's id: an operator can tell which key hit its limit", async () => {
    const keyId = (await g.query("SELECT id FROM api_keys WHERE name = $1", "request-ids"))[0]!.id;
    const limited = await g.createKey({ name: "request-ids-forbidden", modelMode: "allow", models: ["only-this-one"] });
    const res = await fetch(`${g.url}/v1/responses`, authed(limited, { model: "demo-mini", input: "hi" }));
    expect(res.status).toBe(403);
    const id = res.headers.get("x-request-id");
    const line = g.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "request" && l.requestId === id);
    expect(line).toMatchObject({ status: 403 });
    expect(typeof line.keyId).toBe("string");
    expect(line.keyId).not.toBe(keyId);
    expect(line.keyId).toMatch(/^key_/);
  });
});
