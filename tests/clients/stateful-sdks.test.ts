/**
 * Clients that assume the server keeps what it answered, unchanged, against a Gantry in front of a fake upstream
 * that stores nothing (it refuses previous_response_id and item ids, and repeats its ids in every reply):
 * - the Vercel AI SDK responses provider (store: true by default, so item_reference from step 2 on): a tool loop
 *   with stopWhen, streamText, and a multi-turn conversation made by pushing response.messages;
 * - the OpenAI Agents SDK: a run with a tool, then a second turn with previousResponseId;
 * - LangChain's ChatOpenAI with useResponsesApi, two turns.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool, type ModelMessage } from "ai";
import { z } from "zod";
import { startPoolOfTwo, type FakeUpstream, type Scenario } from "../support/fake-upstream";
import { startGantry, type Gantry } from "../support/harness";

let upstream: FakeUpstream;
/** Every test runs through a pool of two whose first account always fails before content. */
let pool: Awaited<ReturnType<typeof startPoolOfTwo>>;
let g: Gantry;
let apiKey: string;

/** The fake's behaviour: after a tool output, report it; asked about the weather with the tool offered, call it; else echo. */
function weatherThenEcho(body: any): Scenario {
  const input: any[] = Array.isArray(body?.input) ? body.input : [];
  const last = input.at(-1);
  if (last?.type === "function_call_output") {
    return { kind: "text", text: `The weather: ${typeof last.output === "string" ? last.output : JSON.stringify(last.output)}` };
  }
  const lastUser = [...input].reverse().find((it) => it.role === "user");
  const text = lastUser ? (typeof lastUser.content === "string" ? lastUser.content : lastUser.content.map((p: any) => p.text).join("")) : "";
  const offered = Array.isArray(body?.tools) && body.tools.some((t: any) => t.name === "get_weather");
  if (offered && text.startsWith("Weather")) return { kind: "calls", calls: [{ name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) }] };
  return { kind: "text", text: `Echo: ${text}` };
}

/** Every input the upstream got, as compact `role/type: text` lines of its last request. */
function lastUpstreamInput(): string[] {
  const body = upstream.requests.filter((r) => r.path.endsWith("/responses")).at(-1)!.body;
  return body.input.map((it: any) =>
    it.type === "function_call" ? `call ${it.name}` : it.type === "function_call_output" ? `output ${it.output}` : `${it.role}: ${(it.content ?? []).map((p: any) => p.text).join("")}`,
  );
}

beforeAll(async () => {
  pool = await startPoolOfTwo({ fixedIds: true, scenario: weatherThenEcho });
  upstream = pool.upstream;
  g = await startGantry({ config: pool.config });
  apiKey = await g.createKey();
});
afterAll(async () => {
  await g.stop();
  await pool.close();
});

const weather = tool({
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

describe("Vercel AI SDK, responses provider (store: true by default)", () => {
  const provider = () => createOpenAI({ apiKey, baseURL: `${g.url}/v1` });

  test("generateText: a tool loop with stopWhen; step 2 carries step 1's call (with the id Gantry gave it) and its output", async () => {
    const result = await generateText({ model: provider().responses("gpt-test"), prompt: "Weather in Paris?", tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
    expect(result.text).toBe("The weather: sunny in Paris");
    expect(result.steps.length).toBe(2);
    // What went upstream in step 2: the whole conversation, references resolved, ids gone.
    expect(lastUpstreamInput()).toEqual(["user: Weather in Paris?", "call get_weather", "output sunny in Paris"]);
  });

  test("streamText, then a second turn by pushing its response messages (item_reference for the earlier output)", async () => {
    const messages: ModelMessage[] = [{ role: "user", content: "Weather in Paris?" }];
    const first = streamText({ model: provider().responses("gpt-test"), messages, tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
    expect(await first.text).toBe("The weather: sunny in Paris");
    messages.push(...(await first.responseMessages));
    messages.push({ role: "user", content: "Thanks, and tomorrow?" });
    const second = await generateText({ model: provider().responses("gpt-test"), messages });
    expect(second.text).toBe("Echo: Thanks, and tomorrow?");
    expect(lastUpstreamInput()).toEqual([
      "user: Weather in Paris?",
      "call get_weather",
      "output sunny in Paris",
      "assistant: The weather: sunny in Paris",
      "user: Thanks, and tomorrow?",
    ]);
  });
});

describe("OpenAI Agents SDK", () => {
  test("a run with a tool, then a second turn with previousResponseId", async () => {
    const { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool: agentTool } = await import("@openai/agents");
    const { default: OpenAI } = await import("openai");
    setTracingDisabled(true);
    setOpenAIAPI("responses");
    setDefaultOpenAIClient(new OpenAI({ apiKey, baseURL: `${g.url}/v1`, maxRetries: 0 }) as any);
    const getWeather = agentTool({
      name: "get_weather",
      description: "Current weather for a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }: { city: string }) => `sunny in ${city}`,
    });
    const agent = new Agent({ name: "Forecaster", instructions: "Answer about the weather.", model: "gpt-test", tools: [getWeather] });
    const first = await run(agent, "Weather in Paris?");
    expect(first.finalOutput).toBe("The weather: sunny in Paris");
    expect(first.lastResponseId).toMatch(/^resp_[0-9a-f]{32}$/);
    const second = await run(agent, "And tomorrow?", { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe("Echo: And tomorrow?");
    expect(lastUpstreamInput()).toEqual([
      "user: Weather in Paris?",
      "call get_weather",
      "output sunny in Paris",
      "assistant: The weather: sunny in Paris",
      "user: And tomorrow?",
    ]);
  });
});

describe("LangChain ChatOpenAI with useResponsesApi", () => {
  test("two turns, the second continuing the first", async () => {
    const { ChatOpenAI } = await import("@langchain/openai");
    const { HumanMessage } = await import("@langchain/core/messages");
    const model = new ChatOpenAI({ model: "gpt-test", apiKey, configuration: { baseURL: `${g.url}/v1` }, useResponsesApi: true, maxRetries: 0 });
    const first = await model.invoke([new HumanMessage("hello there")]);
    expect(first.text).toBe("Echo: hello there");
    const second = await model.invoke([new HumanMessage("hello there"), first, new HumanMessage("again")]);
    expect(second.text).toBe("Echo: again");
    expect(lastUpstreamInput()).toEqual(["user: hello there", "assistant: Echo: hello there", "user: again"]);
    // Continuing by id, as LangChain's previous_response_id option does.
    const third = await model.invoke([new HumanMessage("once more")], { previous_response_id: first.response_metadata.id } as any);
    expect(third.text).toBe("Echo: once more");
    expect(lastUpstreamInput()).toEqual(["user: hello there", "assistant: Echo: hello there", "user: once more"]);
  });
});
