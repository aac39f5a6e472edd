/**
 * Rendered documents (serialised JSON and its ETag) kept until their source changes: the change feed's version
 * of the topic (this process's own changes at once, another process's, e.g. the CLI's, within the feed's
 * delay), and for documents that depend on the time, until the moment they would read differently. Far cheaper
 * than reading the rows, building, serialising and hashing on every request.
 *
 * A hit is answered synchronously (no promise on the hot path); a miss builds from the repository, which may
 * be asynchronous. Concurrent misses of one key share one build, and a build that overlapped a change of the
 * source is handed to its callers but not kept.
 */
import { documentEtag } from "./revalidation";

export interface RenderedDocument {
  body: string;
  etag: string;
  /** The builder had nothing to render (it returned null). */
  empty: boolean;
  /** The body's media type when it is not JSON (an updater feed's YAML or XML). */
  contentType?: string;
}

interface Entry {
  /** A RenderedDocument, or what `getValue`'s builder made. */
  doc: unknown;
  /** The entry holds for `builtAt <= now < expiresAt` (a clock set back makes it stale too). */
  builtAt: number;
  /** Infinity: only a change of the source ends it. */
  expiresAt: number;
}

const MAX_ENTRIES = 256;

type Timed = { value: unknown; expiresAt: number };

export class DocumentCache {
  private entries = new Map<string, Entry>();
  private building = new Map<string, Promise<unknown>>();
  private generation = -1;

  constructor(private readonly currentGeneration: () => number) {}

  /** The rendered document for `key`, built by `build` when missing or when the source changed. */
  get(key: string, build: () => unknown): RenderedDocument | Promise<RenderedDocument> {
    return (this.lookup(key, 0) as RenderedDocument | null) ??
      this.build(key, 0, async () => ({ value: await build(), expiresAt: Number.POSITIVE_INFINITY }), renderDocument);
  }

  /** The same for a document that also changes with time: `build` says until when (epoch ms) its value holds. */
  getUntil(key: string, now: number, build: () => Timed | Promise<Timed>): RenderedDocument | Promise<RenderedDocument> {
    return (this.lookup(key, now) as RenderedDocument | null) ?? this.build(key, now, build, renderDocument);
  }

  /**
   * A value the caller makes from the source (e.g. several rendered documents and the rule to choose among
   * them), kept and dropped like a document.
   */
  getValue<T extends object>(key: string, build: () => T | Promise<T>): T | Promise<T> {
    return (this.lookup(key, 0) as T | null) ??
      this.build(key, 0, async () => ({ value: await build(), expiresAt: Number.POSITIVE_INFINITY }), (v) => v as T);
  }

  private build<D>(key: string, now: number, build: () => Timed | Promise<Timed>, make: (value: unknown) => D): Promise<D> {
    const running = this.building.get(key);
    if (running) return running as Promise<D>;
    const generation = this.generation;
    const done = (async () => {
      try {
        const { value, expiresAt } = await build();
        const doc = make(value);
        // Kept only if the source did not move while it was read: otherwise the next request builds afresh.
        if (this.currentGeneration() === generation) this.keep(key, { doc, builtAt: now, expiresAt });
        return doc;
      } finally {
        this.building.delete(key);
      }
    })();
    this.building.set(key, done);
    return done;
  }

  /** The entry's document for `key` if it still holds at `now` (everything is dropped once the source moved). */
  private lookup(key: string, now: number): unknown {
    const gen = this.currentGeneration();
    if (gen !== this.generation) {
      this.entries.clear();
      this.generation = gen;
    }
    const e = this.entries.get(key);
    return e && now >= e.builtAt && now < e.expiresAt ? e.doc : null;
  }

  private keep(key: string, entry: Entry): void {
    // Keys include the base URL and query, which callers choose: bound the map.
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, entry);
  }
}

/** A value serialised and tagged once (null: the builder had nothing to render). */
/** A document that is text already (YAML, XML): `null` is nothing to render, as for renderDocument. */
export function renderText(body: string | null, contentType: string): RenderedDocument {
  if (body === null) return { body: "", etag: "", empty: true, contentType };
  return { body, etag: documentEtag(body), empty: false, contentType };
}

export function renderDocument(value: unknown): RenderedDocument {
  const body = value === null ? "" : JSON.stringify(value);
  return { body, etag: value === null ? "" : documentEtag(body), empty: value === null };
}

/** `f(value)` now when `value` is at hand, after it resolves otherwise: keeps the cache-hit path free of promises. */
export function whenReady<T, R>(value: T | Promise<T>, f: (v: T) => R): R | Promise<Awaited<R>> {
  return value instanceof Promise ? (value.then(f) as Promise<Awaited<R>>) : f(value);
}
