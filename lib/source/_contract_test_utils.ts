/**
 * The contract every Source passes, as a function each source's tests run (memory, files, kube):
 * `start` delivers the first revision before it resolves; a change is delivered as a later
 * revision with a higher number; an object that did not change is handed over as the same JS
 * object (resolve's memos key on identity); `stop` ends delivery.
 * @module
 */
import { assert, assertEquals } from "../../testbed/assert.ts";
import type { Source, SourceObject, SourceRevision } from "./types.ts";

/**
 * What a source under test provides: it starts holding Service `one`; `addTwo` adds Service `two`
 * (a source of another kind: an object of that kind, named so).
 */
export interface ContractSubject {
  source: Source;
  addTwo: () => Promise<void>;
}

/** A Service object for contract subjects. */
export const contractService = (name: string, namespace = "default"): SourceObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace },
  spec: { ports: [{ port: 80 }] },
});

/**
 * Runs the shared Source contract against a fresh subject; `timeoutMs` bounds each wait. `kind`:
 * the kind of the subject's objects (default Service; a source that holds one kind only, as the
 * CNI source's PodNetwork records, names its own).
 */
export async function sourceContract(
  make: () => Promise<ContractSubject>,
  timeoutMs = 10_000,
  kind = "Service",
): Promise<void> {
  // Only the subject's objects count (a real API server has its own, e.g. default/kubernetes).
  const services = (s: SourceRevision) =>
    s.objects.filter((o) => o.kind === kind && ["one", "two"].includes(o.metadata.name));
  const { source, addTwo } = await make();
  const seen: SourceRevision[] = [];
  let wake: () => void = () => {};
  await source.start((s) => {
    seen.push(s);
    wake();
  });
  try {
    assertEquals(seen.length, 1, "start delivers the first revision before it resolves");
    const first = seen[0];
    assertEquals(services(first).map((o) => o.metadata.name), ["one"]);
    const until = async (ok: () => boolean) => {
      const deadline = Date.now() + timeoutMs;
      while (!ok()) {
        const next = new Promise<void>((r) => (wake = r));
        const left = deadline - Date.now();
        if (left <= 0) throw new Error("no revision with the change arrived");
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([next, new Promise((r) => (timer = setTimeout(r, left)))]);
        clearTimeout(timer);
      }
    };
    await addTwo();
    await until(() => services(seen[seen.length - 1]).length === 2);
    const last = seen[seen.length - 1];
    assert(last.revision > first.revision, "revisions increase");
    assertEquals(services(last).map((o) => o.metadata.name).sort(), ["one", "two"]);
    for (const s of seen) assertEquals(s.objects.length > 0, true, "no revision is empty");
    const oneBefore = services(first).find((o) => o.metadata.name === "one");
    const oneAfter = services(last).find((o) => o.metadata.name === "one");
    assert(oneBefore === oneAfter, "an unchanged object is handed over as the same JS object");
  } finally {
    await source.stop();
  }
  const count = seen.length;
  await new Promise((r) => setTimeout(r, 50));
  assertEquals(seen.length, count, "nothing is delivered after stop");
}
