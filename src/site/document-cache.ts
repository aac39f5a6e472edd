/**
 * Rendered documents (serialised JSON and its ETag) kept until their source changes: the store's generation
 * stamp (this process's own changes at once, another process's, e.g. the CLI's, within a tenth of a second),
 * and for documents that depend on the time, until the moment they would read differently. Far cheaper than
 * reading the rows, building, serialising and hashing on every request.
 */
import { documentEtag } from "./revalidation";

export interface RenderedDocument {
  body: string;
  etag: string;
  /** The builder had nothing to render (it returned null). */
  empty: boolean;
}

interface Entry extends RenderedDocument {
  /** The entry holds for `builtAt <= now < expiresAt` (a clock set back makes it stale too). */
  builtAt: number;
  /** Infinity: only a change of the source ends it. */
  expiresAt: number;
}

const MAX_ENTRIES = 256;

export class DocumentCache {
  private entries = new Map<string, Entry>();
  private generation = -1;

  constructor(private readonly currentGeneration: () => number) {}

  /** The rendered document for `key`, built by `build` when missing or when the source changed. */
  get(key: string, build: () => unknown): RenderedDocument {
    return this.lookup(key, 0) ?? this.keep(key, build(), 0, Number.POSITIVE_INFINITY);
  }

  /** The same for a document that also changes with time: `build` says until when (epoch ms) its value holds. */
  getUntil(key: string, now: number, build: () => { value: unknown; expiresAt: number }): RenderedDocument {
    const hit = this.lookup(key, now);
    if (hit) return hit;
    const { value, expiresAt } = build();
    return this.keep(key, value, now, expiresAt);
  }

  /** The entry for `key` if it still holds at `now` (everything is dropped once the source moved). */
  private lookup(key: string, now: number): Entry | null {
    const gen = this.currentGeneration();
    if (gen !== this.generation) {
      this.entries.clear();
      this.generation = gen;
    }
    const doc = this.entries.get(key);
    return doc && now >= doc.builtAt && now < doc.expiresAt ? doc : null;
  }

  private keep(key: string, value: unknown, now: number, expiresAt: number): Entry {
    const body = value === null ? "" : JSON.stringify(value);
    const doc: Entry = { body, etag: value === null ? "" : documentEtag(body), empty: value === null, builtAt: now, expiresAt };
    // Keys include the base URL and query, which callers choose: bound the map.
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, doc);
    return doc;
  }
}
