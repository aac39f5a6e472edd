/**
 * The open-file limit read from /proc/self/limits, and raised to the hard limit through libc (bun:ffi): lowered
 * here first with the same call, since Bun raises it itself when it starts.
 */
import { expect, test } from "bun:test";
import { dlopen, FFIType, ptr } from "bun:ffi";
import { parseOpenFileLimit, raiseOpenFileLimit } from "../../src/http/open-file-limit";

test("the limits line is read, unlimited included", () => {
  const text = "Limit                     Soft Limit           Hard Limit           Units     \nMax processes             63704                63704                processes \nMax open files            1024                 524288               files     \n";
  expect(parseOpenFileLimit(text)).toEqual({ soft: 1024, hard: 524288 });
  expect(parseOpenFileLimit("Max open files            1024                 unlimited            files")).toEqual({ soft: 1024, hard: "unlimited" });
  expect(parseOpenFileLimit("nothing here")).toBeNull();
});

test.skipIf(process.platform !== "linux")("a soft limit under the hard one is raised to it", () => {
  const libc = dlopen("libc.so.6", { setrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 }, getrlimit: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
  const now = new BigUint64Array(2);
  expect(libc.symbols.getrlimit(7, ptr(now))).toBe(0);
  const hard = now[1];
  try {
    expect(libc.symbols.setrlimit(7, ptr(new BigUint64Array([512n, hard])))).toBe(0);
    const raised = raiseOpenFileLimit()!;
    expect(raised.error).toBeUndefined();
    expect(raised.soft).toBe(Number(hard));
  } finally {
    libc.symbols.setrlimit(7, ptr(new BigUint64Array([hard, hard])));
    libc.close();
  }
});
