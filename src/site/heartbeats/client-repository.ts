/**
 * Clients that report heartbeats, and the per-minute online series: the heartbeats feature's port. The
 * embedded default is SQLite (store/sqlite/clients.ts), which appends reports to a journal (one fsync per
 * batch) and folds them into one row per client in the background; a backend that writes rows directly has
 * nothing to fold. The groups and samples it answers with are types of the statistics rules
 * (rules/client-types.ts), re-exported here so an implementation needs the port alone.
 */
import type { ClientGroup, OnlineSample } from "./rules/client-types";

export type { ClientGroup, OnlineSample } from "./rules/client-types";

/** One client's reports of a batch, merged: earliest and latest time, fields from the latest report that had them. */
export interface ClientReport {
  clientId: string;
  firstAt: number;
  at: number;
  /** Reports merged into this one. */
  count: number;
  app: string | null;
  version: string | null;
  platform: string | null;
  arch: string | null;
  runtime: string | null;
  locale: string | null;
}

export interface FoldResult {
  moved: number;
  more: boolean;
}

export interface ClientRepository {
  /** Records a batch of reports, durably, in one commit (at most one entry per client id). */
  append(reports: readonly ClientReport[]): Promise<void>;
  /**
   * Brings the client rows up to date with every report appended, at most `maxChunks` units of work at a time
   * (a server folds in the background and yields between them). Returns how many reports it moved and whether
   * it stopped at `maxChunks` with work possibly left (a background fold goes on only then: reports that keep
   * arriving under load wait for the next round instead of making every turn of the event loop fold a few).
   * Reads fold first, so they always see every acknowledged report.
   */
  fold(maxChunks?: number): Promise<FoldResult>;
  /** Clients seen at or after `since`. */
  onlineCount(since: number): Promise<number>;
  onlineGroups(since: number): Promise<ClientGroup[]>;
  /**
   * The version this client's last heartbeat reported ("" or null when none, or the client is unknown). It does
   * not fold first: asked on /api/v1/latest, it may miss reports of the last fold interval (about a second).
   */
  reportedVersion(clientId: string): Promise<string | null>;
  /** Every client ever seen (and not pruned). */
  knownCount(): Promise<number>;
  /** Forgets clients last seen before `seenBefore`; returns how many. */
  pruneClients(seenBefore: number): Promise<number>;
  /** Records the online count of a minute; a second sample of the same minute keeps the peak. */
  recordSamples(samples: readonly OnlineSample[]): Promise<void>;
  /** Samples with `from <= minute < toExclusive`, oldest first. */
  samples(from: number, toExclusive: number): Promise<OnlineSample[]>;
  pruneSeries(before: number): Promise<number>;
}
