/** /admin/api/keys over real HTTP: what it refuses (and that a refusal changes nothing), and the state it shows. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGantry, type Gantry } from "../support/harness";

let g: Gantry;
beforeAll(async () => {
  g = await startGantry();
});
afterAll(() => g.stop());

const HOUR = 3_600_000;
let n = 0;
const uniqueName = () => `api-key-${++n}`;

async function send(method: string, path: string, body: unknown) {
  const res = await g.admin(path, { method, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

async function refused(method: string, path: string, body: unknown) {
  const before = JSON.stringify((await (await g.admin("/admin/api/keys")).json()).data);
  const r = await send(method, path, body);
  expect(r.status).toBe(400);
  expect(Object.keys(r.body)).toEqual(["error"]);
  expect(Object.keys(r.body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect([r.body.error.type, r.body.error.code]).toEqual(["invalid_request_error", "invalid_request"]);
  // Nothing was created or changed.
  expect(JSON.stringify((await (await g.admin("/admin/api/keys")).json()).data)).toBe(before);
  return r.body.error as { message: string; param: string };
}

describe("POST refuses what it would otherwise drop or misread", () => {
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ["a misspelt field", { qota: 5 }, "qota", /Unknown field 'qota'/],
    ["the limits object of GET", { limits: { quotaTokens: 5, rpm: 1 } }, "limits", /Unknown field 'limits'.*at the top level/],
    ["rpm 0", { rpm: 0 }, "rpm", /'rpm' is 0.*disable it/],
    ["concurrency 0", { concurrency: 0 }, "concurrency", /'concurrency' is 0/],
    ["quota 1e30", { quotaTokens: 1e30 }, "quotaTokens", /above the largest supported value/],
    ["an empty model list", { allowModels: [] }, "allowModels", /use 'allModels': true/],
    ["a rate as a string", { rpm: "5" }, "rpm", /whole number/],
    ["notBefore after expiresAt", { notBefore: "2030-02-01T00:00:00Z", expiresAt: "2030-01-01T00:00:00Z" }, "notBefore", /'notBefore' .* must be earlier than 'expiresAt'/],
    ["an expiry without zone", { expiresAt: "2030-01-01T10:00:00" }, "expiresAt", /time zone/],
  ];
  for (const [title, fields, param, message] of cases) {
    test(title, async () => {
      const e = await refused("POST", "/admin/api/keys", { name: uniqueName(), ...fields });
      expect(e.param).toBe(param);
      expect(e.message).toMatch(message);
    });
  }
  test("a body without a name, or that is no JSON object", async () => {
    expect((await refused("POST", "/admin/api/keys", { rpm: 5 })).param).toBe("name");
    expect((await send("POST", "/admin/api/keys", "[1]")).body.error.code).toBe("invalid_json");
    expect((await send("POST", "/admin/api/keys", "{oops")).status).toBe(400);
  });
  test("a valid key is still created, with exactly the limits given", async () => {
    const name = uniqueName();
    const r = await send("POST", "/admin/api/keys", { name, rpm: 10, quotaTokens: 5000, allowModels: ["demo-*"], expiresAt: "2999-01-01T00:00:00+08:00" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name, state: "active", modelMode: "allow", models: ["demo-*"], expiresAt: "2998-12-31T16:00:00.000Z" });
    expect(r.body.limits).toEqual({ quotaTokens: 5000, balance: null, rpm: 10, rpd: null, concurrency: null, maxTokens: null });
  });
});

describe("PATCH", () => {
  let id: string;
  beforeAll(async () => {
    const r = await send("POST", "/admin/api/keys", {
      name: uniqueName(),
      rpm: 5,
      notBefore: "2020-01-01T00:00:00Z",
      expiresAt: "2999-01-01T00:00:00Z",
    });
    id = r.body.id;
  });
  test("refuses unknown fields, 0 and an empty list, changing nothing", async () => {
    expect((await refused("PATCH", `/admin/api/keys/${id}`, { rpm: 6, qota: 5 })).param).toBe("qota");
    expect((await refused("PATCH", `/admin/api/keys/${id}`, { rpd: 0 })).param).toBe("rpd");
    expect((await refused("PATCH", `/admin/api/keys/${id}`, { denyModels: [] })).param).toBe("denyModels");
    expect((await send("GET", `/admin/api/keys/${id}`, undefined)).body.limits.rpm).toBe(5);
  });
  test("one side of the period is checked against the stored other side", async () => {
    const late = await refused("PATCH", `/admin/api/keys/${id}`, { notBefore: "2999-01-01T00:00:00Z" });
    expect(late.param).toBe("notBefore");
    expect(late.message).toContain("'expiresAt' 2999-01-01T00:00:00.000Z (stored)");
    const early = await refused("PATCH", `/admin/api/keys/${id}`, { expiresAt: "2019-12-31T00:00:00Z" });
    expect(early.param).toBe("expiresAt");
  });
  test("a valid change applies; null clears", async () => {
    const r = await send("PATCH", `/admin/api/keys/${id}`, { rpm: null, rpd: 100, expiresAt: null });
    expect(r.status).toBe(200);
    expect([r.body.limits.rpm, r.body.limits.rpd, r.body.expiresAt]).toEqual([null, 100, null]);
  });
});

describe("list and show carry each key's state", () => {
  test("expired, not yet valid, disabled, active", async () => {
    const now = Date.now();
    const cases = [
      ["expired", { expiresAt: now - HOUR }],
      ["not_yet_valid", { notBefore: now + HOUR }],
      ["disabled", { status: "disabled", expiresAt: now - HOUR }],
      ["active", { expiresAt: now + HOUR }],
    ] as const;
    const names: string[] = [];
    for (const [, fields] of cases) {
      const name = uniqueName();
      await g.createKey({ name, ...fields });
      names.push(name);
    }
    const list = (await send("GET", "/admin/api/keys", undefined)).body.data as any[];
    for (const [i, [state]] of cases.entries()) {
      const k = list.find((v) => v.name === names[i]);
      expect([k.name, k.state, k.status]).toEqual([names[i], state, state === "disabled" ? "disabled" : "active"]);
      expect((await send("GET", `/admin/api/keys/${k.id}`, undefined)).body.state).toBe(state);
      expect((await send("GET", `/admin/api/keys/${k.id}/usage`, undefined)).body.key.state).toBe(state);
    }
  });
});
