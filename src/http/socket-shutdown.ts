/**
 * shutdown(2) on one of this process's sockets, through libc (bun:ffi): the way to end a connection Bun.serve
 * holds without a handle on it. The descriptor stays Bun's: the peer and Bun's event loop see the connection end,
 * and Bun closes the descriptor itself, as for any connection that ended, so no descriptor is closed behind its back.
 */
import { dlopen, FFIType } from "bun:ffi";

const SHUT_RDWR = 2;

export type ShutdownSocket = (fd: number) => boolean;

/** The shutdown call, or why there is none (no libc found: not Linux, or an unusual one). */
export function loadSocketShutdown(): { shutdown: ShutdownSocket } | { error: string } {
  if (process.platform !== "linux") return { error: `not available on ${process.platform}` };
  const errors: string[] = [];
  for (const name of ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"]) {
    try {
      const lib = dlopen(name, { shutdown: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
      return { shutdown: (fd) => lib.symbols.shutdown(fd, SHUT_RDWR) === 0 };
    } catch (err) {
      errors.push(`${name}: ${(err as Error).message}`);
    }
  }
  return { error: errors.join("; ") };
}
