/**
 * Rendered documents (serialised JSON and its ETag) kept until the releases change (the store's generation
 * stamp: this process's own changes at once, a publish by the CLI in another process within a tenth of a
 * second). Far cheaper than reading every release and asset, building, serialising and hashing per request.
 */
import { documentEtag } from "./releases-revalidation";

export interface RenderedDocument {
  body: string;
  etag: string;
  /** The builder had nothing to render (it returned null). */
  empty: boolean;
}

const MAX_ENTRIES = 256;

export class DocumentCache {
  private entries = new Map<string, RenderedDocument>();
  private generation = -1;

  constructor(private readonly currentGeneration: () => number) {}

  /** The rendered document for `key`, built by `build` when missing or when the releases changed. */
  get(key: string, build: () => unknown): RenderedDocument {
    const gen = this.currentGeneration();
    if (gen !== this.generation) {
      this.entries.clear();
      this.generation = gen;
    }
    let doc = this.entries.get(key);
    if (!doc) {
      const value = build();
      const body = value === null ? "" : JSON.stringify(value);
      doc = { body, etag: value === null ? "" : documentEtag(body), empty: value === null };
      // Keys include the base URL and query, which callers choose: bound the map.
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, doc);
    }
    return doc;
  }
}
