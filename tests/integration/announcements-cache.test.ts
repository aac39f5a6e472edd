/**
 * The rendered announcement documents are cached per query: a change through the server shows on the very next
 * request, and a document changes exactly when a time window opens or closes (with the server's clock injected).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGantry, type Gantry } from "../support/harness";

const T0 = Date.parse("2030-01-01T00:00:00Z");
let clock = T0;
let g: Gantry;

beforeAll(async () => {
  g = await startGantry({ now: () => clock });
});
afterAll(async () => {
  await g.stop();
});

const titles = async (query = "?surface=client") =>
  ((await (await fetch(`${g.url}/api/v1/announcements${query}`)).json()) as any).announcements.map((a: any) => a.title);

async function create(body: Record<string, unknown>): Promise<number> {
  const r = await g.admin("/admin/api/announcements", { method: "POST", body: JSON.stringify({ body: "b", targetSurface: "all", ...body }) });
  expect(r.status).toBe(201);
  return ((await r.json()) as any).id;
}

test("changes made through the server are served by the next request", async () => {
  expect(await titles()).toEqual([]);
  const id = await create({ title: "First", startAt: "2029-01-01T00:00:00Z" });
  expect(await titles()).toEqual(["First"]);
  expect((await g.admin(`/admin/api/announcements/${id}`, { method: "PATCH", body: JSON.stringify({ title: "Renamed" }) })).status).toBe(200);
  expect(await titles()).toEqual(["Renamed"]);
  expect((await g.admin(`/admin/api/announcements/${id}`, { method: "DELETE" })).status).toBe(204);
  expect(await titles()).toEqual([]);
});

test("a cached document turns over exactly at a window's start and expiry", async () => {
  await create({ title: "Window", startAt: "2030-01-01T01:00:00Z", expiresAt: "2030-01-01T02:00:00Z" });
  clock = T0 + 30 * 60_000;
  expect(await titles()).toEqual([]); // cached now, until 01:00
  clock = Date.parse("2030-01-01T00:59:59.999Z");
  expect(await titles()).toEqual([]);
  clock = Date.parse("2030-01-01T01:00:00Z");
  expect(await titles()).toEqual(["Window"]);
  clock = Date.parse("2030-01-01T01:59:59.999Z");
  expect(await titles()).toEqual(["Window"]);
  clock = Date.parse("2030-01-01T02:00:00Z");
  expect(await titles()).toEqual([]);
  // A different query is its own document, built for the current time.
  clock = Date.parse("2030-01-01T01:30:00Z");
  expect(await titles("?surface=home")).toEqual(["Window"]);
});

test("304 for a client whose copy is current, 200 with the new body once it changed", async () => {
  const first = await fetch(`${g.url}/api/v1/announcements?surface=home`);
  const etag = first.headers.get("etag")!;
  expect((await fetch(`${g.url}/api/v1/announcements?surface=home`, { headers: { "if-none-match": etag } })).status).toBe(304);
  await create({ title: "Newer", startAt: "2029-06-01T00:00:00Z" });
  const after = await fetch(`${g.url}/api/v1/announcements?surface=home`, { headers: { "if-none-match": etag } });
  expect(after.status).toBe(200);
  expect(((await after.json()) as any).announcements.map((a: any) => a.title)).toContain("Newer");
});
