/**
 * What every ChangeFeed must do, written against the interface only. A backend's test file calls
 * `changeFeedConformance` with a way to build the feed and a way to make a change the way another process
 * (the CLI, another instance) would: through its own connection, never through the feed under test.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { ChangeFeed, ChangeTopic } from "../../src/state/change-feed";
import { CHANGE_TOPICS } from "../../src/state/change-feed";
import { pollUntil } from "../support/poll";

export interface ChangeFeedFixture {
  feed: ChangeFeed;
  /** A committed change to `topic` made outside this feed, as another process would. */
  changeElsewhere(topic: ChangeTopic): Promise<void>;
  close(): Promise<void> | void;
}

/** The contract's bound for keys is one second; listeners must be well inside it. */
const LISTENER_BOUND_MS = 1000;

export function changeFeedConformance(backend: string, make: () => Promise<ChangeFeedFixture>): void {
  describe(`ChangeFeed conformance: ${backend}`, () => {
    let fx: ChangeFeedFixture | null = null;
    const open = async () => (fx = await make());
    afterEach(async () => {
      fx?.feed.close();
      await fx?.close();
      fx = null;
    });

    test("a version stays the same while nothing changes", async () => {
      const { feed } = await open();
      for (const topic of CHANGE_TOPICS) {
        const first = feed.version(topic);
        expect(feed.version(topic)).toBe(first);
      }
    });

    test("touch moves the version at once and runs the topic's listeners, not other topics'", async () => {
      const { feed } = await open();
      const heard: ChangeTopic[] = [];
      for (const topic of CHANGE_TOPICS) feed.subscribe(topic, () => heard.push(topic));
      const before = feed.version("releases");
      const keysBefore = feed.version("keys");
      feed.touch("releases");
      expect(feed.version("releases")).not.toBe(before);
      expect(heard).toEqual(["releases"]);
      expect(feed.version("keys")).toBe(keysBefore);
    });

    test("a change made elsewhere moves the version and reaches listeners within the bound", async () => {
      const f = await open();
      for (const topic of CHANGE_TOPICS) {
        let calls = 0;
        const off = f.feed.subscribe(topic, () => calls++);
        const before = f.feed.version(topic);
        await f.changeElsewhere(topic);
        const heard = await pollUntil(() => calls, (n) => n > 0, { what: `a listener of ${topic}` });
        expect(heard.elapsedMs).toBeLessThan(LISTENER_BOUND_MS);
        await pollUntil(() => f.feed.version(topic), (v) => v !== before, { what: `the version of ${topic}` });
        off();
      }
    });

    test("an unsubscribed listener hears nothing more", async () => {
      const f = await open();
      let calls = 0;
      const off = f.feed.subscribe("announcements", () => calls++);
      off();
      f.feed.touch("announcements");
      let others = 0;
      f.feed.subscribe("announcements", () => others++);
      await f.changeElsewhere("announcements");
      await pollUntil(() => others, (n) => n > 0, { what: "the remaining listener" });
      expect(calls).toBe(0);
    });

    test("a listener that throws does not keep the others from hearing", async () => {
      const { feed } = await open();
      let heard = 0;
      feed.subscribe("keys", () => {
        throw new Error("listener failed");
      });
      feed.subscribe("keys", () => heard++);
      feed.touch("keys");
      expect(heard).toBe(1);
    });
  });
}
