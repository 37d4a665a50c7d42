/**
 * The edge's engine (resolve + the xDS sink) with a fresh snapshot cache and a silent logger, for
 * benchmarks that time one revision's apply in one process (bench/translate.ts edit medians,
 * bench/edit_apply.ts).
 * @module
 */
import { Engine } from "../lib/engine/mod.ts";
import { SnapshotCache } from "../agent/xds/cache/mod.ts";
import { EdgeSnapshots } from "../agent/xds/edge_snapshots.ts";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";

/** Returns `apply(revision, objects)`, which throws when the engine reports an error. */
export function pipelineApply(): (revision: number, objects: SourceObject[]) => void {
  const engine = new Engine({
    logger: new Logger("bench", () => {}, "error"),
    metrics: new Registry(),
    sinks: [new EdgeSnapshots({ cache: new SnapshotCache() })],
  });
  return (revision, objects) => {
    engine.apply({ revision, objects, problems: [], origins: new Map() });
    if (engine.status.error) throw new Error(engine.status.error);
  };
}
