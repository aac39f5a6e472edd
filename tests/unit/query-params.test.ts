import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { queryParams, readParam, refuseRepeatedParams, singleParams } from "../../src/site/http/rules/query-params";

describe("site query parameters", () => {
  test("one value per name, decoded as URLSearchParams decodes; none without a query", () => {
    expect(singleParams("http://x/a")).toEqual({});
    expect(singleParams("http://x/a?")).toEqual({});
    const p = singleParams("http://x/a?platform=windows&app=my+app&v=%31.0&flag") as Record<string, string>;
    expect({ ...p }).toEqual({ platform: "windows", app: "my app", v: "1.0", flag: "" });
    expect(readParam(p, "platform")).toBe("windows");
    expect(readParam(p, "absent")).toBe("");
    expect(readParam(singleParams("http://x/a") as Record<string, string>, "constructor")).toBe("");
  });

  test("a parameter given twice is an invalid_request naming it", () => {
    const err = queryParams("platform=windows&platform=linux");
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    expect((err as AppError).message).toContain("'platform' must be given once");
  });

  test("names of Object.prototype are plain parameters", () => {
    const p = queryParams("__proto__=x&constructor=y&toString=z") as Record<string, string>;
    expect(readParam(p, "__proto__")).toBe("x");
    expect(readParam(p, "constructor")).toBe("y");
    expect(readParam(p, "hasOwnProperty")).toBe("");
    expect(queryParams("__proto__=x&__proto__=y")).toBeInstanceOf(AppError);
  });

  test("the refusal carries the headers it is given (the site's CORS headers)", async () => {
    const res = refuseRepeatedParams("http://x/a?a=1&a=2", { "access-control-allow-origin": "*" })!;
    expect(res.status).toBe(400);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect((await res.json()).error.param).toBe("a");
    expect(refuseRepeatedParams("http://x/a?a=1&b=2")).toBeUndefined();
  });
});
