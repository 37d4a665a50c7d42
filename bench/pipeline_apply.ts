/**
 * The agent's pipeline with a fresh snapshot cache and a silent logger, for benchmarks that time
 * `Pipeline.apply` in one process (bench/translate.ts edit medians, bench/edit_apply.ts).
 * @module
 */
import { Pipeline } from "../agent/pipeline.ts";
import { SnapshotCache } from "../agent/xds/cache/mod.ts";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import type { SourceObject } from "../lib/source/types.ts";

/** Returns `apply(revision, objects)`, which throws when the pipeline reports an error. */
export function pipelineApply(): (revision: number, objects: SourceObject[]) => void {
  const pipeline = new Pipeline({
    cache: new SnapshotCache(),
    logger: new Logger("bench", () => {}, "error"),
    metrics: new Registry(),
  });
  return (revision, objects) => {
    pipeline.apply({ revision, objects, problems: [], origins: new Map() });
    if (pipeline.status.error) throw new Error(pipeline.status.error);
  };
}
