/** What /v1/models lists for a key (aliases' exact names first), and Anthropic's paged shape of it. */
import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { anthropicModelPage, listedModels, modelPageOf, openAiModel, retrievedModel } from "../../src/gateway/translate/model-listing";

const upstream = [
  { id: "gpt-5.4", object: "model", created: 1767225600, owned_by: "openai" },
  { id: "gpt-5.2", object: "model", created: 1764547200, owned_by: "openai" },
  { id: "gpt-5-mini", object: "model", owned_by: "openai" },
];
const aliases = [
  { id: "claude-opus-4-6", target: "gpt-5.4" },
  { id: "claude-sonnet-4-5", target: "gpt-5.2" },
  { id: "claude-gone", target: "gpt-4o" },
  { id: "GPT-5-mini", target: "gpt-5.4" },
];
const all = () => true;

describe("listed models", () => {
  test("aliases whose target is listed come first, as their target's entry under their name; an upstream model an alias shadows is left out", () => {
    const listed = listedModels(upstream, aliases, all);
    expect(listed.map((m) => [m.entry.id, m.target])).toEqual([
      ["claude-opus-4-6", "gpt-5.4"],
      ["claude-sonnet-4-5", "gpt-5.2"],
      ["GPT-5-mini", "gpt-5.4"],
      ["gpt-5.4", null],
      ["gpt-5.2", null],
    ]);
    expect(listed[0].entry).toEqual({ id: "claude-opus-4-6", object: "model", created: 1767225600, owned_by: "openai" });
  });

  test("the key's permission judges the listed name", () => {
    const sonnet = (m: string) => m.startsWith("claude-sonnet-");
    expect(listedModels(upstream, aliases, sonnet).map((m) => m.entry.id)).toEqual(["claude-sonnet-4-5"]);
  });
});

describe("Anthropic's list", () => {
  const listed = listedModels(upstream, aliases, all);
  const ids = (page: { data: Array<{ id: string }> }) => page.data.map((m) => m.id);

  test("each entry has ModelInfo's fields; what is unknown is null, an unknown date the epoch", () => {
    const page = anthropicModelPage(listed, modelPageOf(new URLSearchParams()));
    expect(page.data[0]).toEqual({
      type: "model",
      id: "claude-opus-4-6",
      display_name: "claude-opus-4-6 (gpt-5.4)",
      created_at: "2026-01-01T00:00:00Z",
      lifecycle: "active",
      capabilities: null,
      deprecated_at: null,
      retires_at: null,
      line: null,
      max_input_tokens: null,
      max_tokens: null,
    });
    expect(page.data[2].created_at).toBe("2026-01-01T00:00:00Z");
    expect(anthropicModelPage(listedModels(upstream, [], all), modelPageOf(new URLSearchParams())).data[2].created_at).toBe("1970-01-01T00:00:00Z");
    expect([page.has_more, page.first_id, page.last_id]).toEqual([false, "claude-opus-4-6", "gpt-5.2"]);
  });

  test("pages: limit, after_id and before_id as Anthropic's cursors", () => {
    const first = anthropicModelPage(listed, modelPageOf(new URLSearchParams("limit=2")));
    expect([ids(first), first.has_more, first.first_id, first.last_id]).toEqual([["claude-opus-4-6", "claude-sonnet-4-5"], true, "claude-opus-4-6", "claude-sonnet-4-5"]);
    const second = anthropicModelPage(listed, modelPageOf(new URLSearchParams("limit=2&after_id=claude-sonnet-4-5")));
    expect([ids(second), second.has_more]).toEqual([["GPT-5-mini", "gpt-5.4"], true]);
    const last = anthropicModelPage(listed, modelPageOf(new URLSearchParams("limit=2&after_id=gpt-5.4")));
    expect([ids(last), last.has_more]).toEqual([["gpt-5.2"], false]);
    const back = anthropicModelPage(listed, modelPageOf(new URLSearchParams("limit=2&before_id=gpt-5.4")));
    expect([ids(back), back.has_more]).toEqual([["claude-sonnet-4-5", "GPT-5-mini"], true]);
    const gone = anthropicModelPage(listed, modelPageOf(new URLSearchParams("after_id=nothing")));
    expect(gone).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
  });

  test("a bad limit or both cursors: 400 naming the parameter", () => {
    for (const [query, param] of [["limit=0", "limit"], ["limit=1001", "limit"], ["limit=abc", "limit"], ["limit=1.5", "limit"], ["after_id=a&before_id=b", "before_id"]]) {
      let err: unknown;
      try {
        modelPageOf(new URLSearchParams(query));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect([(err as AppError).status, (err as AppError).param]).toEqual([400, param]);
    }
  });
});

describe("one model retrieved", () => {
  const upstream = [
    { id: "gpt-5.4", object: "model", created: 1, owned_by: "openai" },
    { id: "claude-x", object: "model", created: 2, owned_by: "someone" },
  ];
  const aliases: Record<string, string> = { "claude-x": "gpt-5.4", "claude-pat-1": "gpt-5.4", "claude-gone": "gpt-3" };
  const upstreamOf = (m: string) => aliases[m] ?? null;
  const all = () => true;

  test("an upstream name is its own entry; an alias (exact or by pattern) its target's under the name asked for, winning over an upstream model of that name", () => {
    expect(retrievedModel(upstream, "gpt-5.4", upstreamOf, all)).toEqual({ entry: upstream[0], target: null });
    expect(retrievedModel(upstream, "claude-x", upstreamOf, all)).toEqual({ entry: { ...upstream[0]!, id: "claude-x" }, target: "gpt-5.4" });
    expect(retrievedModel(upstream, "claude-pat-1", upstreamOf, all)?.target).toBe("gpt-5.4");
  });

  test("unknown, an alias whose target is not listed, and a name the key may not use: null alike", () => {
    expect(retrievedModel(upstream, "nope", upstreamOf, all)).toBeNull();
    expect(retrievedModel(upstream, "claude-gone", upstreamOf, all)).toBeNull();
    expect(retrievedModel(upstream, "gpt-5.4", upstreamOf, (m) => m !== "gpt-5.4")).toBeNull();
    // The permission judges the name asked for, not the target.
    expect(retrievedModel(upstream, "claude-x", upstreamOf, (m) => m !== "gpt-5.4")).not.toBeNull();
  });

  test("OpenAI's shape whatever the upstream left out", () => {
    expect(openAiModel({ id: "m" })).toEqual({ id: "m", object: "model", created: 0, owned_by: "system" });
    expect(openAiModel({ id: "m", created: 5, owned_by: "o", extra: 1 } as any)).toEqual({ id: "m", object: "model", created: 5, owned_by: "o", extra: 1 } as any);
  });
});
