/**
 * Errors that say the store cannot take a write right now, whatever the backend: the disk is full or failing, the
 * database went away. A request that meets one gets a 503 with Retry-After and the error envelope - the operator's
 * problem, not the caller's, and not an internal error: nothing is lost by retrying once it is fixed.
 *
 * Which driver errors mean that is each backend's own knowledge: a backend registers its classifier when its
 * module loads (`classifyStorageErrors`), so this seam imports no backend and a process loads only the drivers
 * it uses. A backend that was never loaded cannot have thrown.
 */
import { AppError, isAppError } from "../errors";

/** Whether a backend's driver error says its storage cannot take the change now. */
export type StorageErrorClassifier = (err: unknown) => boolean;

/** File-system errors of the same kind (mirrors, uploads, backups): the operating system's, met by every backend. */
const FS_UNAVAILABLE = new Set(["ENOSPC", "EDQUOT", "EROFS", "EIO"]);

const classifiers: StorageErrorClassifier[] = [(err) => FS_UNAVAILABLE.has((err as { code?: unknown }).code as string)];

/** Called once by each backend's module as it loads; registering the same classifier again changes nothing. */
export function classifyStorageErrors(classifier: StorageErrorClassifier): void {
  if (!classifiers.includes(classifier)) classifiers.push(classifier);
}

export function isStorageUnavailable(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  for (const classify of classifiers) if (classify(err)) return true;
  return false;
}

export function storageUnavailable(): AppError {
  return new AppError("service_unavailable", "The server's storage cannot take this change right now; retry shortly.", {
    headers: { "retry-after": "5" },
  });
}

/**
 * What a caller is told of an error as it is: an AppError itself, a store that cannot write as 503; null for
 * anything else, which is an internal error (logged by whoever renders it).
 */
export function knownError(err: unknown): AppError | null {
  return isAppError(err) ? err : isStorageUnavailable(err) ? storageUnavailable() : null;
}
