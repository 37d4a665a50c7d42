import assert from "node:assert/strict";
import { join } from "node:path";
import {
  claimStateDir,
  cleanStaleStateDirs,
  isSameProcess,
  processStartTime,
  selfId,
  statePaths,
  tempStatePrefix,
  writeRecord,
} from "./state.ts";

Deno.test("state dir: a live agent's claim refuses a second agent; a dead one's is replaced", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-state-test-" });
  try {
    const parent = { pid: Deno.ppid, startTime: (await processStartTime(Deno.ppid))! };
    assert.ok(await isSameProcess(parent));
    await writeRecord(statePaths(dir).agent, {
      ...parent,
      adminAddress: "",
      xdsAddress: "",
      role: "x",
    });
    await assert.rejects(
      claimStateDir(dir, { adminAddress: "", xdsAddress: "", role: "x" }),
      new RegExp(`another agent \\(pid ${Deno.ppid}\\).*agent stop --state-dir`),
    );
    await writeRecord(statePaths(dir).agent, {
      pid: parent.pid,
      startTime: "0",
      adminAddress: "",
      xdsAddress: "",
      role: "x",
    });
    const claim = await claimStateDir(dir, { adminAddress: "a", xdsAddress: "b", role: "x" });
    await claim.update({ adminAddress: "127.0.0.1:1" });
    const rec = JSON.parse(await Deno.readTextFile(statePaths(dir).agent));
    assert.equal(rec.pid, Deno.pid);
    assert.equal(rec.adminAddress, "127.0.0.1:1");
    await claim.release();
    await assert.rejects(Deno.stat(statePaths(dir).agent));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("state dir: stale temporary directories of crashed agents are removed, live ones kept", async () => {
  const parent = await Deno.makeTempDir({ prefix: "aether-state-parent-" });
  try {
    const make = async (name: string, agent?: unknown) => {
      const dir = join(parent, `${tempStatePrefix}${name}`);
      await Deno.mkdir(dir);
      if (agent) await writeRecord(statePaths(dir).agent, agent);
      return dir;
    };
    const dead = await make("dead", { pid: Deno.pid, startTime: "not-this-one" });
    const live = await make("live", await selfId());
    const fresh = await make("fresh");
    const mine = await make("mine", { pid: Deno.pid, startTime: "not-this-one" });
    const removed = await cleanStaleStateDirs(parent, mine);
    assert.deepEqual(removed, [dead]);
    for (const d of [live, fresh, mine]) assert.ok((await Deno.stat(d)).isDirectory);
    // With no grace, a record-less directory counts as left behind too.
    assert.deepEqual(await cleanStaleStateDirs(parent, mine, -1), [fresh]);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
