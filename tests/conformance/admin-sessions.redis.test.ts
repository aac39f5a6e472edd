/** The AdminSessionStore suite against Redis, and what only sharing adds: a session made by one instance is found by another. */
import { afterAll, expect, test } from "bun:test";
import { RedisAdminSessions } from "../../src/store/redis/admin-sessions";
import { redisUnavailable, redisUrl } from "../support/redis";
import { adminSessionsConformance } from "./admin-sessions.suite";

const unavailable = redisUnavailable();
const made: RedisAdminSessions[] = [];

if (unavailable) {
  console.warn(`Redis session tests skipped: ${unavailable}`);
  test.skip(`Redis admin sessions: ${unavailable}`, () => {});
} else {
  afterAll(() => made.forEach((s) => s.close()));
  const make = async (now: () => number, options = {}) => {
    const s = new RedisAdminSessions(await redisUrl(), now, options);
    made.push(s);
    return s;
  };

  adminSessionsConformance("Redis", make);

  test("Redis: a session made through one instance is live on another, and signing out on either ends it", async () => {
    const a = await make(() => 1000);
    const b = await make(() => 2000);
    const { id, session } = await a.create("fp");
    expect(await b.get(id, "fp")).toMatchObject({ csrf: session.csrf, lastSeen: 2000 });
    await b.destroy(id);
    expect(await a.get(id, "fp")).toBeNull();
  });
}
