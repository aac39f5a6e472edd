import { describe, expect, test } from "bun:test";
import { GroupCommit } from "../../src/state/group-commit";

/** A promise with its settle functions outside, so a test decides when a write finishes. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("GroupCommit", () => {
  test("items added in one turn are written as one batch, and each promise resolves after it", async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit<number>((items) => {
      batches.push(items);
    });
    await Promise.all([commit.add(1), commit.add(2), commit.add(3)]);
    expect(batches).toEqual([[1, 2, 3]]);
    expect(commit.written).toEqual({ batches: 1, items: 3 });
  });

  test("maxBatch flushes at once and splits the items", async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit<number>((items) => void batches.push(items), { maxBatch: 2, maxDelayMs: 0 });
    await Promise.all([1, 2, 3, 4, 5].map((n) => commit.add(n)));
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  test("a synchronous writer that throws rejects that batch's items only", async () => {
    let fail = true;
    const commit = new GroupCommit<number>(() => {
      if (fail) throw new Error("disk full");
    });
    const first = await Promise.allSettled([commit.add(1), commit.add(2)]);
    expect(first.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    await commit.add(3);
    expect(commit.written).toEqual({ batches: 1, items: 1 });
  });

  test("an already settled promise (an async port over a synchronous store) is answered in the same flush", async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit<number>(async (items) => {
      batches.push(items);
    });
    const added = [commit.add(1), commit.add(2)];
    void commit.flush();
    // The flush settled the batch itself, synchronously: nothing is left in flight for the next batch to wait on.
    expect(commit.written).toEqual({ batches: 1, items: 2 });
    await Promise.all(added);
    await commit.add(3);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  test("an already rejected promise rejects the batch with the writer's error", async () => {
    const commit = new GroupCommit<number>(async () => {
      throw new Error("constraint failed");
    });
    const results = await Promise.allSettled([commit.add(1), commit.add(2)]);
    expect(results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "ok"))).toEqual(["constraint failed", "constraint failed"]);
    expect(commit.written).toEqual({ batches: 0, items: 0 });
  });

  test("with a slow asynchronous writer one batch is in flight; what arrives meanwhile forms the next, in order", async () => {
    const writes: { items: number[]; done: ReturnType<typeof deferred> }[] = [];
    const commit = new GroupCommit<number>((items) => {
      const done = deferred();
      writes.push({ items, done });
      return done.promise;
    });
    const first = commit.add(1);
    void commit.flush(); // starts writing [1]; it stays in flight until the test settles it
    const later = [commit.add(2), commit.add(3)];
    const secondFlush = commit.flush();
    expect(writes.map((w) => w.items)).toEqual([[1]]);
    writes[0]!.done.resolve();
    await first;
    // The next batch starts from the first one's settlement (microtasks only, no timers).
    for (let i = 0; i < 100 && writes.length < 2; i++) await Promise.resolve();
    expect(writes.map((w) => w.items)).toEqual([[1], [2, 3]]);
    writes[1]!.done.resolve();
    await Promise.all([...later, secondFlush]);
    expect(commit.written).toEqual({ batches: 2, items: 3 });
  });

  test("close writes what is waiting and refuses later items", async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit<number>((items) => void batches.push(items));
    const pending = commit.add(7);
    await commit.close();
    await pending;
    expect(batches).toEqual([[7]]);
    await expect(commit.add(8)).rejects.toThrow("closed");
  });
});
