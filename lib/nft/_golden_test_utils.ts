/**
 * The nft golden cases (`testdata/<case>.in.yaml`: a `spec` and, for a set sync, the `next`
 * one), read strictly; shared by the golden test and the agent's test that runs every case
 * through real nftables.
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { goldenCaseNames, readYamlStrict } from "../../testbed/golden.ts";
import type { CaptureSpec } from "./mod.ts";

/** The folder of the cases. */
export const goldenDir: string = fileURLToPath(new URL("./testdata/", import.meta.url));

/** One case: a spec, and the spec a set sync goes to. */
export interface NftGoldenCase {
  name: string;
  spec: CaptureSpec;
  next?: CaptureSpec;
}

/** Every case, by name. */
export function nftGoldenCases(): NftGoldenCase[] {
  return goldenCaseNames(goldenDir).map((name) => {
    const doc = readYamlStrict(join(goldenDir, `${name}.in.yaml`)) as Omit<NftGoldenCase, "name">;
    return { name, ...doc };
  });
}
