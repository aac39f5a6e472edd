/** The hourly purge of expired stored responses as a service: what it logs, and that stopping it quiets a purge still going. */
import { expect, test } from "bun:test";
import { responsePurge } from "../../src/gateway/responses/purge";
import type { StoredResponseRepository } from "../../src/gateway/responses/stored-response-repository";
import { createLogger } from "../../src/log";

function setup(purgeExpired: (now: number) => Promise<number>) {
  const lines: Array<{ level: string; msg: string; responses?: number; error?: string }> = [];
  const log = createLogger("info", (line) => void lines.push(JSON.parse(line)), false);
  const purge = responsePurge({ purgeExpired } as unknown as StoredResponseRepository, () => 6_000, log);
  return { purge, lines };
}

test("start purges at once (once, however often it is called) and logs how many went; nothing when none did", async () => {
  const asked: number[] = [];
  const { purge, lines } = setup(async (now) => {
    asked.push(now);
    return 3;
  });
  await purge.start();
  await purge.start();
  purge.stop();
  expect(asked).toEqual([6_000]);
  expect(lines.map((l) => [l.msg, l.responses])).toEqual([["expired stored responses removed", 3]]);

  const none = setup(async () => 0);
  await none.purge.start();
  none.purge.stop();
  expect(none.lines).toEqual([]);
});

test("a purge that fails is a warning while running, and no fault once stopped (the store closed under its chunks)", async () => {
  let fail!: (err: Error) => void;
  const { purge, lines } = setup(() => new Promise<number>((_, reject) => (fail = reject)));
  const first = purge.start();
  purge.stop();
  fail(new Error("Cannot use a closed database"));
  await first;
  expect(lines).toEqual([]);

  const running = setup(async () => {
    throw new Error("disk I/O error");
  });
  await running.purge.start();
  running.purge.stop();
  expect(running.lines.map((l) => [l.level, l.msg, l.error])).toEqual([["warn", "removing expired stored responses failed", "disk I/O error"]]);
});
