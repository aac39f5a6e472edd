/** The simulated model's tool-call arguments follow the tool's schema and the user's words, like a real model's. */
import { describe, expect, test } from "bun:test";
import { planDemoReply } from "../../src/gateway/simulator/simulated-upstream";
import { placeIn, sampleFromSchema } from "../../src/gateway/simulator/tool-arguments";

describe("placeIn", () => {
  const cases: Array<[string, string | null]> = [
    ["What is the weather in Paris?", "Paris"],
    ["What's the weather in New York tomorrow?", "New York"],
    ["Is it raining in São Paulo for 3 days", "São Paulo"],
    ["weather for tomorrow in Oslo", "Oslo"],
    ["weather in paris", "paris"],
    ["Tell me about Berlin", "Berlin"],
    ["find cat videos", null],
  ];
  for (const [text, want] of cases) test(JSON.stringify(text), () => expect(placeIn(text)).toBe(want));
});

describe("sampleFromSchema", () => {
  test("a place-like property gets the place, a query-like one the content words", () => {
    const schema = {
      type: "object",
      properties: { location: { type: "string" }, query: { type: "string" }, units: { type: "string" } },
      required: ["location", "query", "units"],
    };
    expect(sampleFromSchema(schema, "Restaurants in Lyon please")).toEqual({ location: "Lyon", query: "Restaurants Lyon", units: "metric" });
  });
  test("numbers come from the text and stay within the declared bounds", () => {
    const schema = { type: "object", properties: { days: { type: "integer", minimum: 1, maximum: 7 }, ratio: { type: "number" } } };
    expect(sampleFromSchema(schema, "forecast for 10 days")).toEqual({ days: 7, ratio: 10 });
    expect(sampleFromSchema(schema, "forecast please")).toEqual({ days: 1, ratio: 1 });
  });
  test("formats, enums, defaults and nullable unions", () => {
    const schema = {
      type: "object",
      properties: {
        when: { type: "string", format: "date" },
        contact: { type: "string", format: "email" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        detail: { type: "string", default: "short" },
        city: { anyOf: [{ type: "null" }, { type: "string" }] },
      },
    };
    expect(sampleFromSchema(schema, "weather in Rome")).toEqual({
      when: "2026-01-01",
      contact: "user@example.com",
      unit: "celsius",
      detail: "short",
      city: "Rome",
    });
  });
  test("only the required properties when the schema lists them", () => {
    const schema = { type: "object", properties: { city: { type: "string" }, extra: { type: "string" } }, required: ["city"] };
    expect(sampleFromSchema(schema, "weather in Paris")).toEqual({ city: "Paris" });
  });
});

test("the demo's printed chat example gets a get_weather call for Paris", () => {
  const reply = planDemoReply({
    input: [{ type: "message", role: "user", content: "What is the weather in Paris?" }],
    tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }],
  } as never);
  expect(reply.calls).toEqual([{ name: "get_weather", arguments: '{"city":"Paris"}' }]);
});
