/** A child process that holds a file open, for the /proc writer checks (docs/repair.md rule 2). */
import { spawn } from "node:child_process";

/** Starts a child holding `file` open with `flags` ("r", "r+", …); resolves once it has it open. */
export async function holdOpen(file: string, flags: string): Promise<{ pid: number; stop(): void }> {
  const child = spawn(
    process.execPath,
    ["-e", `require("fs").openSync(${JSON.stringify(file)}, "${flags}"); console.log("open"); setInterval(() => {}, 1000);`],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`holder exited ${code}`)));
  });
  return { pid: child.pid!, stop: () => child.kill() };
}
