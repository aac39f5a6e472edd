/** The AppError a call throws, for tests that check its code, message and `param`; fails if it throws none. */
import { expect } from "bun:test";
import { AppError } from "../../src/errors";

export function thrownAppError(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return e as AppError;
  }
  throw new Error("expected an AppError");
}
