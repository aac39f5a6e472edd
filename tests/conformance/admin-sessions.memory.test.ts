/** The AdminSessionStore suite against the in-process default. */
import { expect, test } from "bun:test";
import { InMemoryAdminSessions } from "../../src/admin/admin-sessions";
import { adminSessionsConformance } from "./admin-sessions.suite";

adminSessionsConformance("in-process", async (now, options) => new InMemoryAdminSessions(now, options));

test("in-process: the oldest sessions give way past maxSessions, so a flood of sign-ins cannot grow memory", async () => {
  const s = new InMemoryAdminSessions(() => 0, { maxSessions: 3 });
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await s.create("fp")).id);
  const alive = await Promise.all(ids.map((id) => s.get(id, "fp")));
  expect(alive.map((x) => x !== null)).toEqual([false, false, true, true, true]);
});
