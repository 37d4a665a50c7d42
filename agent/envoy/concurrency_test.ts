import assert from "node:assert/strict";
import { join } from "node:path";
import {
  autoConcurrency,
  concurrencyArgs,
  ownCpuMaxes,
  parseEnvoyConcurrency,
  quotaCpus,
  v1CpuMax,
} from "./concurrency.ts";

Deno.test("--envoy-concurrency: auto by default, a worker count, anything else refused", () => {
  assert.equal(parseEnvoyConcurrency(undefined), "auto");
  assert.equal(parseEnvoyConcurrency("auto"), "auto");
  assert.equal(parseEnvoyConcurrency("4"), 4);
  for (const bad of ["0", "-1", "1.5", "two", "", "2000"]) {
    assert.throws(() => parseEnvoyConcurrency(bad), /--envoy-concurrency/, bad);
  }
});

Deno.test("auto: the affinity's CPUs bounded by the smallest quota, rounded up, ≥ 1", () => {
  assert.equal(quotaCpus("max 100000"), undefined);
  assert.equal(quotaCpus("150000 100000"), 2);
  assert.equal(quotaCpus("50000 100000"), 1);
  assert.equal(quotaCpus("garbage"), undefined);
  assert.equal(autoConcurrency(64, []), 64, "no quota: every CPU it may run on");
  assert.equal(autoConcurrency(64, ["max 100000", "200000 100000"]), 2);
  assert.equal(autoConcurrency(64, ["400000 100000", "250000 100000"]), 3, "the smallest wins");
  assert.equal(autoConcurrency(2, ["800000 100000"]), 2, "a quota above the affinity");
  assert.equal(autoConcurrency(0, []), 1);
  assert.equal(v1CpuMax("-1\n", "100000\n"), "max 100000");
  assert.equal(v1CpuMax("50000", "100000"), "50000 100000");
});

Deno.test("Envoy's arguments: --concurrency added unless already given", () => {
  assert.deepEqual(concurrencyArgs(2), ["--concurrency", "2"]);
  assert.deepEqual(concurrencyArgs(3, ["--drain-time-s", "5"]), [
    "--drain-time-s",
    "5",
    "--concurrency",
    "3",
  ]);
  assert.deepEqual(concurrencyArgs(3, ["--concurrency", "8"]), ["--concurrency", "8"]);
});

Deno.test("the quotas of a process's cgroups: v2 and v1, its own and its parents'", async () => {
  const root = await Deno.makeTempDir({ prefix: "aether-cgroup-" });
  try {
    const self = join(root, "self-cgroup");
    const write = async (path: string, text: string) => {
      await Deno.mkdir(join(root, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, path), text);
    };
    await write("kubepods/pod1/ctr/cpu.max", "max 100000\n");
    await write("kubepods/pod1/cpu.max", "150000 100000\n");
    await write("cpu.max", "max 100000\n");
    await Deno.writeTextFile(self, "0::/kubepods/pod1/ctr\n");
    assert.deepEqual(await ownCpuMaxes(root, self), [
      "max 100000\n",
      "150000 100000\n",
      "max 100000\n",
    ]);
    await write("cpu,cpuacct/kubepods/pod2/cpu.cfs_quota_us", "50000\n");
    await write("cpu,cpuacct/kubepods/pod2/cpu.cfs_period_us", "100000\n");
    await write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    await write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    await Deno.writeTextFile(self, "4:memory:/x\n3:cpu,cpuacct:/kubepods/pod2\n");
    const v1 = await ownCpuMaxes(root, self);
    assert.deepEqual(v1, ["50000 100000", "max 100000"]);
    assert.equal(autoConcurrency(32, v1), 1);
    assert.deepEqual(await ownCpuMaxes(root, join(root, "missing")), []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
