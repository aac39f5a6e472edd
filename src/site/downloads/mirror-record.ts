/**
 * Keeps the database's note of which mirror holds its files (mirror-location.ts) true:
 * - `checkMirrorRecord`, at a server's start, refuses a mirror other than the recorded one, and records the
 *   mirror in use for a database that has files but no note yet (it predates the note) once the mirror is seen
 *   to hold them;
 * - `RecordingMirror` records the mirror when the first file is stored (a fresh database: any mirror will do
 *   until then), and refuses to store into another one than the recorded one.
 */
import type { MetaRepository } from "../../state/meta-repository";
import type { Logger } from "../../log";
import type { ReleaseRepository } from "../releases/release-repository";
import type { DirectUrlOptions, Mirror, MirrorLocation, MirrorObject, PutOptions } from "../releases/mirror";
import { MIRROR_RECORD_KEY, describeMirror, encodeMirrorLocation, mirrorMismatchMessage, parseMirrorLocation, sameMirror } from "./rules/mirror-location";

/** How many of a database's mirrored files are looked for when it has files but no note (one found is enough). */
const SAMPLE = 3;

/** The mirror in use is not the one that holds the database's files. */
export class MirrorMismatchError extends Error {
  constructor(
    readonly recorded: MirrorLocation,
    readonly current: MirrorLocation,
  ) {
    super(mirrorMismatchMessage(recorded, current));
    this.name = "MirrorMismatchError";
  }
}

/** The recorded location; a value this binary cannot read is refused rather than overwritten. */
async function recorded(meta: MetaRepository): Promise<MirrorLocation | null> {
  const value = await meta.get(MIRROR_RECORD_KEY);
  if (value === null) return null;
  const location = parseMirrorLocation(value);
  if (!location) throw new Error(`the database's note of where its asset files are (meta "${MIRROR_RECORD_KEY}") is unreadable: ${JSON.stringify(value.slice(0, 200))}`);
  return location;
}

/** Records `location` unless another process recorded one first; throws if that one is another mirror. */
async function record(meta: MetaRepository, location: MirrorLocation): Promise<void> {
  if (await meta.setIfAbsent(MIRROR_RECORD_KEY, encodeMirrorLocation(location))) return;
  const first = await recorded(meta);
  if (first && !sameMirror(first, location)) throw new MirrorMismatchError(first, location);
}

export interface MirrorRecordDeps {
  meta: MetaRepository;
  releases: ReleaseRepository;
  mirror: Mirror;
  log: Logger;
}

/** At a server's start: throws MirrorMismatchError when the database's files are in another mirror than this one. */
export async function checkMirrorRecord({ meta, releases, mirror, log }: MirrorRecordDeps): Promise<void> {
  const note = await recorded(meta);
  if (note) {
    if (!sameMirror(note, mirror.location)) throw new MirrorMismatchError(note, mirror.location);
    return;
  }
  const held = [...new Set((await releases.list()).flatMap((r) => r.assets.filter((a) => a.mirrored && a.sha256).map((a) => a.sha256)))];
  // A fresh database (or one whose files are all remote): any mirror will do, and the first file stored records it.
  if (held.length === 0) return;
  for (const sha256 of held.slice(0, SAMPLE)) {
    if (await mirror.has(sha256)) return record(meta, mirror.location);
  }
  // Files that may be lost rather than elsewhere (pull-through fills the mirror again from the assets' URLs):
  // said, not refused, and nothing recorded until a file is stored.
  log.warn("the database lists mirrored asset files that this mirror does not hold: if they are in another mirror, start with its settings", {
    mirror: describeMirror(mirror.location),
    mirroredFiles: held.length,
    looked: Math.min(SAMPLE, held.length),
  });
}

/**
 * A mirror that records itself in the database when a file is first stored into it, and refuses to store into
 * a mirror other than the recorded one. Only `put` looks at the note, and only until it has agreed once.
 */
export class RecordingMirror implements Mirror {
  private agreed = false;

  constructor(
    private readonly inner: Mirror,
    private readonly meta: MetaRepository,
  ) {}

  get location(): MirrorLocation {
    return this.inner.location;
  }

  async put(body: ReadableStream<Uint8Array>, options?: PutOptions): Promise<MirrorObject> {
    if (!this.agreed) {
      const note = await recorded(this.meta);
      if (note && !sameMirror(note, this.inner.location)) {
        await body.cancel().catch(() => {});
        throw new MirrorMismatchError(note, this.inner.location);
      }
      this.agreed = note !== null;
    }
    const stored = await this.inner.put(body, options);
    if (!this.agreed) {
      await record(this.meta, this.inner.location);
      this.agreed = true;
    }
    return stored;
  }

  has(sha256: string): Promise<boolean> {
    return this.inner.has(sha256);
  }

  open(sha256: string): Promise<Blob | null> {
    return this.inner.open(sha256);
  }

  remove(sha256: string): Promise<void> {
    return this.inner.remove(sha256);
  }

  directUrl(sha256: string, options: DirectUrlOptions): Promise<string | null> {
    return this.inner.directUrl(sha256, options);
  }

  sweep(): Promise<void> {
    return this.inner.sweep();
  }
}
