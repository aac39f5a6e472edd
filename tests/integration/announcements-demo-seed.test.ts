/** The demo's sample announcements: the kinds promised, served by the public endpoint, and idempotent. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { seedDemoEngagement } from "../../src/cli/demo-seed-engagement";
import { startGantry, type Gantry } from "../support/harness";

let g: Gantry;
let examples: (base: string) => string;
beforeAll(async () => {
  g = await startGantry();
  examples = await seedDemoEngagement(g.deps);
});
afterAll(() => g.stop());

const get = async (q: string) => (await (await fetch(`${g.url}/api/v1/announcements${q}`)).json()).announcements;

test("client and home items, a test-only one, a version range, a zh-CN text", async () => {
  const items = (await g.deps.engagement.announcements.list());
  expect(items.some((a) => a.targetSurface === "client")).toBe(true);
  expect(items.some((a) => a.targetSurface === "home")).toBe(true);
  expect(items.some((a) => a.testOnly)).toBe(true);
  expect(items.some((a) => a.minVersion !== "" && a.maxVersion !== "")).toBe(true);
  expect(items.some((a) => a.locales["zh-CN"]?.title)).toBe(true);

  // An old build is asked to update; an up-to-date one is not, and reads the Chinese texts.
  const old = await get("?surface=client&app=demo&version=1.1.0");
  expect(old.map((a: any) => a.title)).toEqual(["Please update: security fix", "Scheduled maintenance"]);
  const zh = await get("?surface=client&app=demo&version=1.2.0&locale=zh-CN");
  expect(zh.map((a: any) => a.title)).toEqual(["计划维护"]);
  expect((await get("?surface=home&locale=zh-CN")).map((a: any) => a.title)).toEqual(["计划维护", "1.2.0 版已发布"]);
  expect((await get("?surface=client&app=demo-staging")).some((a: any) => a.testOnly)).toBe(true);
});

test("seeding again replaces the demo items instead of adding copies", async () => {
  const n = (await g.deps.engagement.announcements.list()).length;
  await seedDemoEngagement(g.deps);
  expect((await g.deps.engagement.announcements.list()).length).toBe(n);
});

test("the curl lines use the given base URL and work", async () => {
  const text = examples(g.url);
  expect(text).toContain(`${g.url}/api/v1/announcements?surface=home`);
  expect(text).toContain(`${g.url}/api/v1/client/heartbeat`);
  expect(text).toContain(`${g.url}/admin/api/stats/clients`);
  // The heartbeat line's body is accepted as printed.
  const body = /-d '(\{.*\})'/.exec(text)![1];
  const res = await fetch(`${g.url}/api/v1/client/heartbeat`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-app-client-id": "demo-test" },
    body,
  });
  expect(res.status).toBe(200);
});
