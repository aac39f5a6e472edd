/**
 * What every StoredResponseRepository must do, against the interface only: a response and its items per key,
 * nothing of another key's, expiry, delete taking its items along, an item replayed with its id staying with the
 * response that made it, responses that end together committed together, purge and stats (in all and per key).
 */
import { describe, expect, test } from "bun:test";
import { EVICTION_PER_PUT, PURGE_CHUNK, type StoredResponse, type StoredResponseRepository } from "../../src/gateway/responses/stored-response-repository";
import { namedItemId } from "../../src/gateway/responses/named-item-ids";

export interface StoredResponsesFixture {
  repo: StoredResponseRepository;
  /** How many item rows the backend holds (stored_items): what keeping writes besides the response's own row. */
  itemRows(): Promise<number>;
  close(): Promise<void> | void;
}

let n = 0;
function response(keyId: string, over: Partial<StoredResponse> = {}): StoredResponse {
  const id = `resp_${Date.now().toString(16)}${(++n).toString(16).padStart(8, "0")}`;
  return {
    id,
    keyId,
    previousId: null,
    model: "gpt-test",
    account: null,
    createdAt: 1_000,
    expiresAt: 10_000,
    response: { id, object: "response", status: "completed", output: [{ id: `msg_${id}`, type: "message", role: "assistant", content: [{ type: "output_text", text: "hi" }] }] },
    inputItems: [{ id: `in_${id}`, type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] }],
    ...over,
  };
}

export function storedResponsesConformance(backend: string, make: () => Promise<StoredResponsesFixture>): void {
  describe(`StoredResponseRepository conformance: ${backend}`, () => {
    test("a response and its items read back for their key only, until they expire", async () => {
      const fx = await make();
      try {
        const r = response("k1", { previousId: "resp_before" });
        await fx.repo.put(r);
        expect(await fx.repo.get("k1", r.id, 2_000)).toEqual({ ...r, bytes: JSON.stringify(r.response).length + JSON.stringify(r.inputItems).length });
        expect(await fx.repo.get("k2", r.id, 2_000)).toBeNull();
        expect(await fx.repo.get("k1", r.id, 10_000)).toBeNull();
        const items = await fx.repo.items("k1", [`msg_${r.id}`, `in_${r.id}`, "nope"], 2_000);
        expect([...items.keys()].sort()).toEqual([`in_${r.id}`, `msg_${r.id}`].sort());
        expect(items.get(`msg_${r.id}`)).toEqual((r.response.output as any)[0]);
        expect((await fx.repo.items("k2", [`msg_${r.id}`], 2_000)).size).toBe(0);
        expect((await fx.repo.items("k1", [`msg_${r.id}`], 10_000)).size).toBe(0);
        expect((await fx.repo.items("k1", [], 2_000)).size).toBe(0);
      } finally {
        await fx.close();
      }
    });

    test("the upstream account that produced a response is kept with it (null when not known)", async () => {
      const fx = await make();
      try {
        const r = response("k1", { account: "primary" });
        const unknown = response("k1");
        await fx.repo.put(r);
        await fx.repo.put(unknown);
        expect((await fx.repo.get("k1", r.id, 2_000))?.account).toBe("primary");
        expect((await fx.repo.get("k1", unknown.id, 2_000))?.account).toBeNull();
      } finally {
        await fx.close();
      }
    });

    test("itemSizes: the byte length of each live item's stored JSON, by id, for the key only", async () => {
      const fx = await make();
      try {
        const r = response("k1", { inputItems: [{ id: "in_sized", type: "message", role: "user", content: [{ type: "input_text", text: "h\u00e9llo" }] }] });
        await fx.repo.put(r);
        const sizes = await fx.repo.itemSizes("k1", ["in_sized", "in_sized", `msg_${r.id}`, "nope"], 2_000);
        expect([...sizes.keys()].sort()).toEqual(["in_sized", `msg_${r.id}`].sort());
        expect(sizes.get("in_sized")).toBe(Buffer.byteLength(JSON.stringify(r.inputItems[0])));
        expect(sizes.get(`msg_${r.id}`)).toBe(Buffer.byteLength(JSON.stringify((r.response.output as any)[0])));
        expect((await fx.repo.itemSizes("k2", ["in_sized"], 2_000)).size).toBe(0);
        expect((await fx.repo.itemSizes("k1", ["in_sized"], 10_000)).size).toBe(0);
        expect((await fx.repo.itemSizes("k1", [], 2_000)).size).toBe(0);
      } finally {
        await fx.close();
      }
    });

    test("inputItems: a page by position, either order, after an id, has_more; null for another key's or an expired response", async () => {
      const fx = await make();
      try {
        const inputItems = Array.from({ length: 250 }, (_, i) => ({ id: `in_${i}`, type: "message", role: "user", content: [{ type: "input_text", text: `t${i}` }] }));
        const r = response("k1", { inputItems });
        await fx.repo.put(r);
        const ids = (page: any) => page.items.map((it: any) => it.id);
        const all = (from: number, to: number) => inputItems.slice(from, to).map((it) => it.id);
        expect(ids(await fx.repo.inputItems("k1", r.id, 2_000, { limit: 3, order: "asc", after: null }))).toEqual(all(0, 3));
        const desc = await fx.repo.inputItems("k1", r.id, 2_000, { limit: 2, order: "desc", after: null });
        expect(ids(desc)).toEqual(["in_249", "in_248"]);
        expect((desc as any).hasMore).toBe(true);
        expect(ids(await fx.repo.inputItems("k1", r.id, 2_000, { limit: 100, order: "asc", after: "in_199" }))).toEqual(all(200, 250));
        const last = await fx.repo.inputItems("k1", r.id, 2_000, { limit: 50, order: "asc", after: "in_199" });
        expect((last as any).hasMore).toBe(false);
        expect(ids(await fx.repo.inputItems("k1", r.id, 2_000, { limit: 2, order: "desc", after: "in_10" }))).toEqual(["in_9", "in_8"]);
        expect((await fx.repo.inputItems("k1", r.id, 2_000, { limit: 5, order: "desc", after: "in_0" })) as any).toEqual({ items: [], hasMore: false });
        expect(await fx.repo.inputItems("k1", r.id, 2_000, { limit: 5, order: "asc", after: "nope" })).toBe("after_not_found");
        expect((await fx.repo.inputItems("k1", r.id, 2_000, { limit: 1, order: "asc", after: null }) as any).items[0]).toEqual(inputItems[0]);
        expect(await fx.repo.inputItems("k2", r.id, 2_000, { limit: 5, order: "asc", after: null })).toBeNull();
        expect(await fx.repo.inputItems("k1", r.id, 10_000, { limit: 5, order: "asc", after: null })).toBeNull();
        expect(await fx.repo.inputItems("k1", "resp_nope", 2_000, { limit: 5, order: "asc", after: null })).toBeNull();
        // The whole response still reads back with its items in order.
        expect((await fx.repo.get("k1", r.id, 2_000))?.inputItems).toEqual(inputItems);
        await fx.repo.delete("k1", r.id);
        expect(await fx.repo.inputItems("k1", r.id, 2_000, { limit: 5, order: "asc", after: null })).toBeNull();
      } finally {
        await fx.close();
      }
    });

    test("a short input list pages as a long one does, and its items named after the response need no row", async () => {
      const fx = await make();
      try {
        const id = `resp_${Date.now().toString(16).padStart(12, "0")}${(++n).toString(16).padStart(20, "0")}`;
        // Ids named after the response (as Gantry gives them), a caller's own ids (one twice), one item without an id.
        const inputItems: any[] = Array.from({ length: 12 }, (_, i) => ({ id: i % 3 === 0 ? `own_${i}` : namedItemId(id, "msg", i), type: "message", role: "user", content: [{ type: "input_text", text: `t${i}` }] }));
        inputItems[5] = { ...inputItems[5], id: "own_3" };
        inputItems[7] = { type: "message", role: "user", content: [] };
        const r = response("k1", { id, response: { id, object: "response", status: "completed", output: [] }, inputItems });
        await fx.repo.put(r);
        // Rows only for the caller's ids (5 of them): the rest is found through the response's row.
        expect(await fx.itemRows()).toBe(5);
        const page = async (limit: number, order: "asc" | "desc", after: string | null) => fx.repo.inputItems("k1", id, 2_000, { limit, order, after });
        const ids = (p: any) => p.items.map((it: any) => it.id ?? null);
        const all = (from: number, to: number) => inputItems.slice(from, to).map((it) => it.id ?? null);
        expect(ids(await page(3, "asc", null))).toEqual(all(0, 3));
        expect(await page(2, "desc", null)).toEqual({ items: [inputItems[11], inputItems[10]], hasMore: true });
        expect(await page(20, "asc", inputItems[8].id)).toEqual({ items: inputItems.slice(9), hasMore: false });
        expect(await page(3, "asc", inputItems[8].id)).toEqual({ items: inputItems.slice(9), hasMore: false });
        expect(await page(2, "asc", inputItems[8].id)).toEqual({ items: inputItems.slice(9, 11), hasMore: true });
        // A repeated id: the first in the order asked for.
        expect(ids(await page(2, "asc", "own_3"))).toEqual(all(4, 6));
        expect(ids(await page(2, "desc", "own_3"))).toEqual([inputItems[4].id, inputItems[3].id]);
        expect(await page(5, "desc", "own_0")).toEqual({ items: [], hasMore: false });
        expect(await page(5, "asc", "nope")).toBe("after_not_found");
        expect(await fx.repo.inputItems("k2", id, 2_000, { limit: 5, order: "asc", after: null })).toBeNull();
        expect((await fx.repo.get("k1", id, 2_000))?.inputItems).toEqual(inputItems);
        // Every id found by reference, with its size; the repeated one is its first copy.
        const wanted = [...new Set(inputItems.filter((it) => it.id).map((it) => it.id as string))];
        const found = await fx.repo.items("k1", wanted, 2_000);
        for (const w of wanted) expect(found.get(w)).toEqual(inputItems.find((it) => it.id === w));
        const sizes = await fx.repo.itemSizes("k1", wanted, 2_000);
        for (const w of wanted) expect(sizes.get(w)).toBe(Buffer.byteLength(JSON.stringify(inputItems.find((it) => it.id === w))));
        expect((await fx.repo.items("k2", wanted, 2_000)).size).toBe(0);
        await fx.repo.delete("k1", id);
        expect((await fx.repo.items("k1", wanted, 2_000)).size).toBe(0);
        expect(await fx.itemRows()).toBe(0);
      } finally {
        await fx.close();
      }
    });

    test("put with limits: past a key's count or bytes its oldest go (items along), never the one just put, other keys untouched", async () => {
      const fx = await make();
      try {
        const other = response("k2", { createdAt: 1 });
        await fx.repo.put(other);
        const puts = Array.from({ length: 5 }, (_, i) => response("k1", { createdAt: 1_000 + i }));
        for (const r of puts) await fx.repo.put(r, { responses: 3, bytes: 0 });
        const live = async (rs: StoredResponse[]) => (await Promise.all(rs.map((r) => fx.repo.get(r.keyId, r.id, 2_000)))).map((r) => r !== null);
        expect(await live(puts)).toEqual([false, false, true, true, true]);
        expect((await fx.repo.items("k1", [`msg_${puts[0]!.id}`, `in_${puts[1]!.id}`], 2_000)).size).toBe(0);
        expect(await fx.repo.inputItems("k1", puts[0]!.id, 2_000, { limit: 5, order: "asc", after: null })).toBeNull();
        expect((await fx.repo.stats("k1")).responses).toBe(3);
        expect(await live([other])).toEqual([true]);

        // Bytes: a limit of about two responses keeps the newest two; one response alone over it is still kept.
        const size = (await fx.repo.stats("k1")).bytes / 3;
        const next = response("k1", { createdAt: 2_000 });
        await fx.repo.put(next, { responses: 0, bytes: Math.floor(size * 2.5) });
        expect(await live([...puts.slice(2), next])).toEqual([false, false, true, true]);
        const big = response("k1", { createdAt: 3_000, inputItems: [{ id: `in_big`, type: "message", role: "user", content: [{ type: "input_text", text: "x".repeat(10_000) }] }] });
        await fx.repo.put(big, { responses: 0, bytes: 1_000 });
        expect(await live([puts[4]!, next, big])).toEqual([false, false, true]);
        expect(await fx.repo.stats("k1")).toEqual({ responses: 1, bytes: (await fx.repo.get("k1", big.id, 2_000))!.bytes! });

        // Without limits, nothing goes.
        for (let i = 0; i < 3; i++) await fx.repo.put(response("k1", { createdAt: 4_000 + i }));
        expect((await fx.repo.stats("k1")).responses).toBe(4);
        // Deletes and the purge keep the counts true.
        await fx.repo.delete("k1", big.id);
        expect((await fx.repo.stats("k1")).responses).toBe(3);
        await fx.repo.put(response("k1", { createdAt: 5_000 }), { responses: 2, bytes: 0 });
        expect((await fx.repo.stats("k1")).responses).toBe(2);
      } finally {
        await fx.close();
      }
    });

    test("a key far over a lowered limit comes down a bounded number a put, its oldest first, until within it", async () => {
      const fx = await make();
      try {
        const old = Array.from({ length: EVICTION_PER_PUT + 100 }, (_, i) => response("k1", { createdAt: 1_000 + i }));
        await Promise.all(old.map((r) => fx.repo.put(r)));
        // The limit now 10 (an operator lowered it): one put removes EVICTION_PER_PUT of the oldest, not all at once.
        const first = response("k1", { createdAt: 5_000 });
        await fx.repo.put(first, { responses: 10, bytes: 0 });
        expect((await fx.repo.stats("k1")).responses).toBe(old.length + 1 - EVICTION_PER_PUT);
        expect(await fx.repo.get("k1", old[EVICTION_PER_PUT - 1]!.id, 2_000)).toBeNull();
        expect(await fx.repo.get("k1", old[EVICTION_PER_PUT]!.id, 2_000)).not.toBeNull();
        // The next put takes it the rest of the way: the newest ten are what is left.
        const second = response("k1", { createdAt: 5_001 });
        await fx.repo.put(second, { responses: 10, bytes: 0 });
        expect((await fx.repo.stats("k1")).responses).toBe(10);
        const newest = [...old.slice(-8), first, second];
        expect((await Promise.all(newest.map((r) => fx.repo.get("k1", r.id, 2_000)))).every((r) => r !== null)).toBe(true);
      } finally {
        await fx.close();
      }
    });

    test("delete is per key and takes the response's items along", async () => {
      const fx = await make();
      try {
        const r = response("k1");
        await fx.repo.put(r);
        expect(await fx.repo.delete("k2", r.id)).toBe(false);
        expect(await fx.repo.delete("k1", r.id)).toBe(true);
        expect(await fx.repo.delete("k1", r.id)).toBe(false);
        expect(await fx.repo.get("k1", r.id, 2_000)).toBeNull();
        expect((await fx.repo.items("k1", [`msg_${r.id}`], 2_000)).size).toBe(0);
      } finally {
        await fx.close();
      }
    });

    test("an item replayed with its id stays with the response that made it; puts that arrive together all land", async () => {
      const fx = await make();
      try {
        const first = response("k1");
        await fx.repo.put(first);
        const replayed = (first.response.output as any)[0];
        const rest = Array.from({ length: 20 }, () => response("k1", { inputItems: [replayed] }));
        await Promise.all(rest.map((r) => fx.repo.put(r)));
        for (const r of rest) expect((await fx.repo.get("k1", r.id, 2_000))?.inputItems).toEqual([replayed]);
        await fx.repo.delete("k1", rest[0]!.id);
        expect((await fx.repo.items("k1", [replayed.id], 2_000)).get(replayed.id)).toEqual(replayed);
        expect((await fx.repo.stats()).responses).toBe(20);
      } finally {
        await fx.close();
      }
    });

    test("a replayed id names the copy of the earliest live response: a changed replay does not replace it, and it outlives the first", async () => {
      const fx = await make();
      try {
        const first = response("k1", { createdAt: 1_000 });
        await fx.repo.put(first);
        const original = (first.response.output as any)[0];
        const changed = { ...original, content: [{ type: "output_text", text: "changed" }] };
        const later = response("k1", { createdAt: 1_001, inputItems: [changed, changed] });
        await fx.repo.put(later);
        expect((await fx.repo.items("k1", [original.id], 2_000)).get(original.id)).toEqual(original);
        expect((await fx.repo.itemSizes("k1", [original.id], 2_000)).get(original.id)).toBe(Buffer.byteLength(JSON.stringify(original)));
        // The response that first kept it is gone; the one that replayed it still holds it, as its input says.
        await fx.repo.delete("k1", first.id);
        expect((await fx.repo.items("k1", [original.id], 2_000)).get(original.id)).toEqual(changed);
        expect((await fx.repo.items("k2", [original.id], 2_000)).size).toBe(0);
      } finally {
        await fx.close();
      }
    });

    test("output items whose ids name their response are found in its output, without a row of their own", async () => {
      const fx = await make();
      try {
        // A response id as Gantry mints them (12 hex digits of time, 20 random), its output items named after it.
        const id = `resp_${Date.now().toString(16).padStart(12, "0")}${(++n).toString(16).padStart(20, "0")}`;
        const reasoning = { id: namedItemId(id, "rs", 0), type: "reasoning", summary: [] };
        const message = { id: namedItemId(id, "msg", 1), type: "message", role: "assistant", content: [{ type: "output_text", text: "h\u00e9" }] };
        const foreign = { id: "msg_upstream_kept_as_is", type: "message", role: "assistant", content: [] };
        const r = response("k1", { id, response: { id, object: "response", status: "completed", output: [reasoning, message, foreign] } });
        await fx.repo.put(r);
        // The input item's row and the row of the output item whose id does not name the response: no more.
        expect(await fx.itemRows()).toBe(2);
        const found = await fx.repo.items("k1", [reasoning.id, message.id, foreign.id, namedItemId(id, "msg", 7)], 2_000);
        expect(Object.fromEntries(found)).toEqual({ [reasoning.id]: reasoning, [message.id]: message, [foreign.id]: foreign });
        const sizes = await fx.repo.itemSizes("k1", [message.id, message.id, reasoning.id], 2_000);
        expect(Object.fromEntries(sizes)).toEqual({ [message.id]: Buffer.byteLength(JSON.stringify(message)), [reasoning.id]: Buffer.byteLength(JSON.stringify(reasoning)) });
        expect((await fx.repo.items("k2", [message.id], 2_000)).size).toBe(0);
        expect((await fx.repo.itemSizes("k1", [message.id], 10_000)).size).toBe(0);
        expect(await fx.repo.get("k1", id, 2_000)).toEqual({ ...r, bytes: JSON.stringify(r.response).length + JSON.stringify(r.inputItems).length });

        // Sent back in a later turn: the response that made it wins while it lives, then the replay is found by its row.
        const changed = { ...message, content: [{ type: "output_text", text: "changed" }] };
        const later = response("k1", { createdAt: 1_001, inputItems: [changed] });
        await fx.repo.put(later);
        expect((await fx.repo.items("k1", [message.id], 2_000)).get(message.id)).toEqual(message);
        await fx.repo.delete("k1", id);
        expect((await fx.repo.items("k1", [message.id, reasoning.id], 2_000)).get(message.id)).toEqual(changed);
        expect((await fx.repo.itemSizes("k1", [message.id, reasoning.id], 2_000)).get(message.id)).toBe(Buffer.byteLength(JSON.stringify(changed)));
        expect((await fx.repo.items("k1", [reasoning.id], 2_000)).size).toBe(0);
      } finally {
        await fx.close();
      }
    });

    test("items and itemSizes find ids with commas, quotes, braces, backslashes and non-ASCII", async () => {
      const fx = await make();
      try {
        const ids = ["a,b", 'q"uote', "{x}", "back\\slash", "é 🎉", "NULL"];
        const r = response("k1", { inputItems: ids.map((id) => ({ id, type: "message", role: "user", content: [{ type: "input_text", text: id }] })) });
        await fx.repo.put(r);
        const found = await fx.repo.items("k1", [...ids, "nope"], 2_000);
        expect([...found.keys()].sort()).toEqual([...ids].sort());
        for (const [id, item] of found) expect(item).toEqual(r.inputItems.find((it) => it.id === id)!);
        expect([...(await fx.repo.itemSizes("k1", ids, 2_000)).keys()].sort()).toEqual([...ids].sort());
      } finally {
        await fx.close();
      }
    });

    test("responseObject: the response alone, for its key only, until it expires", async () => {
      const fx = await make();
      try {
        const r = response("k1");
        await fx.repo.put(r);
        expect(await fx.repo.responseObject("k1", r.id, 2_000)).toEqual(r.response);
        expect(await fx.repo.responseObject("k2", r.id, 2_000)).toBeNull();
        expect(await fx.repo.responseObject("k1", r.id, 10_000)).toBeNull();
        expect(await fx.repo.responseObject("k1", "resp_nope", 2_000)).toBeNull();
      } finally {
        await fx.close();
      }
    });

    test("purge removes what expired and says how many; stats count what is left", async () => {
      const fx = await make();
      try {
        await fx.repo.put(response("k1", { expiresAt: 5_000 }));
        await fx.repo.put(response("k1", { expiresAt: 5_000 }));
        const kept = response("k1", { expiresAt: 50_000 });
        await fx.repo.put(kept);
        const before = await fx.repo.stats();
        expect(before.responses).toBe(3);
        expect(before.bytes).toBeGreaterThan(0);
        expect(await fx.repo.purgeExpired(6_000)).toBe(2);
        expect((await fx.repo.stats()).responses).toBe(1);
        expect(await fx.repo.get("k1", kept.id, 6_000)).not.toBeNull();
      } finally {
        await fx.close();
      }
    });

    test("a purge of more than one chunk removes every expired response, keeps the live ones and what the limits count", async () => {
      const fx = await make();
      try {
        const expired = Array.from({ length: 2 * PURGE_CHUNK + 10 }, (_, i) => response(i % 2 ? "a" : "b", { expiresAt: 5_000 }));
        await Promise.all(expired.map((r) => fx.repo.put(r)));
        const live = [response("a", { expiresAt: 50_000 }), response("a", { expiresAt: 50_000 }), response("b", { expiresAt: 50_000 })];
        await Promise.all(live.map((r) => fx.repo.put(r)));
        expect(await fx.repo.purgeExpired(6_000)).toBe(expired.length);
        expect((await fx.repo.stats()).responses).toBe(3);
        expect((await fx.repo.stats("a")).responses).toBe(2);
        for (const r of live) expect(await fx.repo.get(r.keyId, r.id, 6_000)).not.toBeNull();
        // The counts the limits read went down with the rows: key a, two live, takes a third under a limit of three
        // and loses none (counts left too high would evict its oldest).
        const third = response("a", { expiresAt: 50_000 });
        await fx.repo.put(third, { responses: 3, bytes: 0 });
        for (const r of [live[0]!, live[1]!, third]) expect(await fx.repo.get("a", r.id, 6_000)).not.toBeNull();
        expect(await fx.repo.purgeExpired(6_000)).toBe(0);
      } finally {
        await fx.close();
      }
    });

    test("stats of one key count its responses and their bytes only, until deleted or purged", async () => {
      const fx = await make();
      try {
        const a1 = response("a");
        const a2 = response("a", { expiresAt: 5_000, inputItems: [] });
        const b = response("b", { response: { ...response("b").response, output_text: "x".repeat(5_000) } });
        await Promise.all([a1, a2, b].map((r) => fx.repo.put(r)));
        const size = (r: StoredResponse) => JSON.stringify(r.response).length + JSON.stringify(r.inputItems).length;
        expect(await fx.repo.stats("a")).toEqual({ responses: 2, bytes: size(a1) + size(a2) });
        expect(await fx.repo.stats("b")).toEqual({ responses: 1, bytes: size(b) });
        expect(await fx.repo.stats("nobody")).toEqual({ responses: 0, bytes: 0 });
        // The keys' figures add up to the total: each row is counted for its own key once.
        expect(await fx.repo.stats()).toEqual({ responses: 3, bytes: size(a1) + size(a2) + size(b) });
        // a2 expired at 5 000 and was counted above: like the total, what is kept counts until the purge removes it.
        await fx.repo.purgeExpired(6_000);
        expect(await fx.repo.stats("a")).toEqual({ responses: 1, bytes: size(a1) });
        await fx.repo.delete("a", a1.id);
        expect(await fx.repo.stats("a")).toEqual({ responses: 0, bytes: 0 });
        expect(await fx.repo.stats("b")).toEqual({ responses: 1, bytes: size(b) });
      } finally {
        await fx.close();
      }
    });
  });
}
