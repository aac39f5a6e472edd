/**
 * What the online statistics (client-stats.ts) are computed from, as the client repository (client-repository.ts)
 * answers: groups of online clients and per-minute samples. Declared here, with the rules that read them, so that
 * rules/ imports nothing of its parent.
 */

/** Online clients with the same reported fields, and how many. */
export interface ClientGroup {
  app: string;
  version: string;
  platform: string;
  arch: string;
  runtime: string;
  locale: string;
  clients: number;
}

export interface OnlineSample {
  minute: number;
  online: number;
}
