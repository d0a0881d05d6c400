/** The one read-exactly loop (src/io/read-exactly.ts) the window, the index reader and dump share. */
import { describe, expect, it } from "vitest";
import { readExactly } from "../src/io/read-exactly.js";

/** A file of `bytes` that returns at most `maxPerRead` bytes per read. */
function fakeFile(bytes: Uint8Array, maxPerRead: number, failAt = -1) {
  const reads: number[] = [];
  return {
    reads,
    async read(target: Uint8Array, position: number): Promise<number> {
      reads.push(position);
      if (position === failAt) throw Object.assign(new Error("I/O error"), { code: "EIO" });
      const count = Math.max(0, Math.min(target.length, maxPerRead, bytes.length - position));
      target.set(bytes.subarray(position, position + count));
      return count;
    },
  };
}

const data = Uint8Array.from({ length: 100 }, (_, i) => i);

describe("readExactly", () => {
  it("retries short reads until the target is full", async () => {
    const file = fakeFile(data, 7);
    const target = new Uint8Array(30);
    await readExactly(file, target, 50, { path: "/p/x.log", sizeAtStart: 100 });
    expect([...target]).toEqual([...data.subarray(50, 80)]);
    expect(file.reads).toEqual([50, 57, 64, 71, 78]);
  });

  it("end of file before the target is full is StorageSizeMismatch, naming path, position and size", async () => {
    await expect(readExactly(fakeFile(data, 64), new Uint8Array(30), 90, { path: "/p/x.log", sizeAtStart: 200 })).rejects.toMatchObject({
      name: "ScanFailure",
      code: "StorageSizeMismatch",
      path: "/p/x.log",
      message: "/p/x.log ended at byte 100 but was 200 bytes when the scan started; nothing was changed",
    });
  });

  it("a read error is ReadFailure with its cause, naming the position", async () => {
    await expect(readExactly(fakeFile(data, 8, 16), new Uint8Array(30), 0, { path: "/p/x.index", sizeAtStart: 100 })).rejects.toMatchObject(
      {
        code: "ReadFailure",
        message: "read of /p/x.index at byte 16 failed: i/o error (EIO); nothing was changed",
      },
    );
  });
});
