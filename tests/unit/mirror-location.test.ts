/** The database's note of which mirror holds its files: format, comparison, and the words of a refusal. */
import { describe, expect, test } from "bun:test";
import { describeMirror, encodeMirrorLocation, mirrorMismatchMessage, parseMirrorLocation, sameMirror } from "../../src/site/downloads/rules/mirror-location";

const fs = { kind: "filesystem" } as const;
const s3 = (bucket: string, endpoint: string | null = null) => ({ kind: "s3", bucket, endpoint }) as const;

describe("mirror location", () => {
  test("round-trips, without credentials an endpoint URL carried", () => {
    expect(parseMirrorLocation(encodeMirrorLocation(fs))).toEqual(fs);
    expect(parseMirrorLocation(encodeMirrorLocation(s3("assets", "https://key:secret@s3.internal/")))).toEqual(s3("assets", "https://s3.internal"));
    expect(encodeMirrorLocation(s3("assets", "https://key:secret@s3.internal"))).not.toContain("secret");
  });

  test("a value this binary did not write is not a location", () => {
    for (const v of ["", "filesystem", "{}", '{"kind":"s3"}', '{"kind":"s3","bucket":""}', "null", "[]"]) expect(parseMirrorLocation(v)).toBeNull();
  });

  test("the same mirror: same kind, and for S3 the same bucket whatever the endpoint is called", () => {
    expect(sameMirror(fs, fs)).toBe(true);
    expect(sameMirror(fs, s3("a"))).toBe(false);
    expect(sameMirror(s3("a"), fs)).toBe(false);
    expect(sameMirror(s3("a", "http://10.0.0.5:9000"), s3("a", "https://s3.internal/"))).toBe(true);
    expect(sameMirror(s3("a"), s3("b"))).toBe(false);
  });

  test("the refusal names the recorded mirror and the settings that reach it", () => {
    const m = mirrorMismatchMessage(s3("assets", "https://s3.internal"), fs);
    expect(m).toContain(`the S3 bucket "assets" at https://s3.internal`);
    expect(m).toContain("GANTRY_S3_BUCKET=assets");
    expect(m).toContain(describeMirror(fs));
    expect(mirrorMismatchMessage(fs, s3("b"))).toContain("start without GANTRY_S3_BUCKET");
  });
});
