/**
 * The note of which mirror holds the files, on SQLite (the PostgreSQL side runs in tests/integration/mirror-record):
 * the first file stored writes it, a mirror other than the noted one may not store, and the start check refuses it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { FileSystemMirror } from "../../src/store/files/fs-mirror";
import { openSqliteStores } from "../../src/store/sqlite/stores";
import { RecordingMirror, MirrorMismatchError, checkMirrorRecord } from "../../src/site/downloads/mirror-record";
import { MIRROR_RECORD_KEY, encodeMirrorLocation, parseMirrorLocation } from "../../src/site/downloads/rules/mirror-location";
import type { Mirror } from "../../src/site/releases/mirror";
import { silentLogger } from "../../src/log";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();
const stores = openSqliteStores({ path: ":memory:" });
afterAll(() => stores.close());

/** A file-system mirror that says it is a bucket: the note is all that is compared. */
function posingAsBucket(inner: Mirror, bucket: string): Mirror {
  return Object.assign(Object.create(inner), { location: { kind: "s3", bucket, endpoint: null } });
}

describe("mirror note on SQLite", () => {
  test("the first file stored notes the mirror; another mirror then stores nothing and does not start", async () => {
    const fs = new FileSystemMirror(join(tempDir("note"), "mirror"));
    const recording = new RecordingMirror(fs, stores.meta);
    expect(await stores.meta.get(MIRROR_RECORD_KEY)).toBeNull();
    const stored = await recording.put(new Blob(["first file"]).stream());
    expect(parseMirrorLocation((await stores.meta.get(MIRROR_RECORD_KEY))!)).toEqual({ kind: "filesystem" });

    const other = new FileSystemMirror(join(tempDir("other"), "mirror"));
    const elsewhere = new RecordingMirror(posingAsBucket(other, "assets"), stores.meta);
    await expect(elsewhere.put(new Blob(["second file"]).stream())).rejects.toBeInstanceOf(MirrorMismatchError);
    expect(await other.has(stored.sha256)).toBe(false);
    await expect(checkMirrorRecord({ meta: stores.meta, releases: stores.releases, mirror: elsewhere, log: silentLogger })).rejects.toThrow(
      "this database's asset files are in the data dir's mirror (no S3 bucket), but this instance uses the S3 bucket \"assets\"",
    );
    await checkMirrorRecord({ meta: stores.meta, releases: stores.releases, mirror: recording, log: silentLogger });
  });

  test("a note this binary cannot read is refused, not overwritten", async () => {
    await stores.meta.set(MIRROR_RECORD_KEY, "garbage");
    const recording = new RecordingMirror(new FileSystemMirror(join(tempDir("garbage"), "mirror")), stores.meta);
    await expect(recording.put(new Blob(["x"]).stream())).rejects.toThrow("unreadable");
    expect(await stores.meta.get(MIRROR_RECORD_KEY)).toBe("garbage");
    await stores.meta.set(MIRROR_RECORD_KEY, encodeMirrorLocation({ kind: "filesystem" }));
  });
});
