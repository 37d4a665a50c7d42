/**
 * Entry-point helpers shared by the binaries: run `main` and exit with its code (an error
 * message names the binary), and keep running until SIGINT/SIGTERM, then close and exit 0.
 * @module
 */
import type { Logger } from "../log/mod.ts";

/** Runs `main(Deno.args)` and exits with its code; a thrown error prints `<name>: <message>`. */
export async function runMain(name: string, main: (args: string[]) => Promise<number>) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (e) {
    console.error(`${name}: ${(e as Error).message}`);
    Deno.exit(1);
  }
}

/** Waits for SIGINT or SIGTERM, logs `message`, runs `close` and exits 0. Never returns. */
export function untilSignal(
  logger: Logger,
  message: string,
  close: () => Promise<void>,
): Promise<never> {
  const stop = async () => {
    logger.info(message);
    await close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  return new Promise(() => {});
}
