/** /openapi.json documents the public contract only, generated from the routes; /docs renders it locally. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGantry, type Gantry } from "../support/harness";

describe("OpenAPI document", () => {
  let g: Gantry;
  let doc: any;
  beforeAll(async () => {
    g = await startGantry();
    const res = await fetch(`${g.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = await res.json();
  });
  afterAll(() => g.stop());

  test("lists the gateway and the site API, and nothing administrative", () => {
    const paths = Object.keys(doc.paths);
    for (const p of [
      "/v1/responses",
      "/v1/chat/completions",
      "/v1/models",
      "/responses",
      "/chat/completions",
      "/models",
      "/api/v1/latest",
      "/api/v1/download/{assetId}",
      "/dl/{token}",
      "/api/v1/announcements",
      "/api/v1/client/heartbeat",
      "/update/latest.json",
    ]) {
      expect(paths).toContain(p);
    }
    for (const p of paths) expect(p).not.toMatch(/^\/(admin|portal|docs|metrics|healthz|readyz|openapi)/);
    expect(Object.keys(doc.paths["/dl/{token}"]).sort()).toEqual(["get", "head"]);
  });

  test("every operation has a tag the document declares: the stored-response routes are gateway routes, not 'Other'", () => {
    const declared = new Set(doc.tags.map((t: any) => t.name));
    const untagged: string[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (!op.tags?.length || !op.tags.every((t: string) => declared.has(t))) untagged.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(untagged).toEqual([]);
    for (const path of ["/v1/responses/{id}", "/v1/responses/{id}/input_items", "/responses/{id}"]) {
      for (const op of Object.values<any>(doc.paths[path])) expect(op.tags).toEqual(["Model gateway"]);
    }
    expect(doc.paths["/v1/responses/{id}"].delete.summary).toBe("Delete a stored response");
  });

  test("gateway operations carry request and response shapes, and the bearer scheme", () => {
    const op = doc.paths["/v1/responses"].post;
    expect(op.requestBody.content["application/json"].schema.properties.model.type).toBe("string");
    expect(op.responses["200"].content).toHaveProperty("text/event-stream");
    expect(op.responses["429"].content["application/json"].schema.properties.error).toBeDefined();
    expect(op.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes.bearerAuth.scheme).toBe("bearer");
    expect(doc.paths["/v1/chat/completions"].post.requestBody.content["application/json"].schema.required).toContain("messages");
    expect(doc.paths["/api/v1/latest"].get.responses["200"].content["application/json"].schema.properties.schema.const).toBe("app.latest.v1");
  });

  test("documenting a body does not make Elysia parse or validate it", async () => {
    // Not JSON at all: the gateway's own reader answers (after authentication), not a framework validator.
    const res = await fetch(`${g.url}/v1/responses`, { method: "POST", body: "{oops" });
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe("missing_api_key");
  });

  test("/docs is a local page that renders the document (no CDN)", async () => {
    const res = await fetch(`${g.url}/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('src="/docs/assets/docs.js"');
    expect(html).not.toMatch(/https?:\/\//);
    const js = await (await fetch(`${g.url}/docs/assets/docs.js`)).text();
    expect(js).toContain("/openapi.json");
    expect(js).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
  });
});
