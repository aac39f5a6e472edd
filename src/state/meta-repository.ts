/**
 * Small named values the server keeps beside its records: the admin token's hash, the last release-sync
 * report and the sync's page state. Strings in, strings out; the caller owns the format.
 */
export interface MetaRepository {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  /** Sets the value only if none exists; true when this call set it (the first writer wins, across processes). */
  setIfAbsent(key: string, value: string): Promise<boolean>;
}
