/**
 * The edge's identity: its own SVID from the Workload API (`--spire-socket`), presented on every
 * edge → pod hop (mTLS to `pod:15008`), plus what the edge's xDS sink needs to dial pods: endpoint
 * identities from the Pods in its config and the SDS secrets (own SVID, trust bundles), with a
 * call on each rotation.
 * @module
 */
import type { IR } from "../../lib/ir/mod.ts";
import type { Logger } from "../../lib/log/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import { bundleSecret, svidSecret } from "../xds/translate/mod.ts";
import type { NamedResource } from "../xds/translate/mod.ts";
import {
  IdentityDecorations,
  type IdentityScheme,
  identityScheme,
  outsideMeshPods,
  plaintextServices,
  podIdentities,
  withIdentities,
} from "./mesh_identity.ts";
import { parseSpiffeId } from "./svid.ts";
import { SvidHealth } from "./svid_health.ts";
import type { Registry } from "../../lib/metrics/mod.ts";
import { WorkloadApiClient, type WorkloadUpdate } from "./workload.ts";

/** Options of {@link startEdgeIdentity}. */
export interface EdgeIdentityOptions {
  socket: string;
  trustDomain: string;
  template?: string;
  /** Namespaces whose pods are outside the mesh (see IdentityScheme). */
  outsideNamespaces?: readonly string[];
  logger: Logger;
  /** How long to wait for the first SVID. Default 60 s. */
  timeoutMs?: number;
  /**
   * Where the SVID's expiry and renewal gauges go (svid_health.ts), updated every `countdownMs`
   * (default 10 s); an SVID past its expiry without a successor is logged as an error.
   */
  metrics?: Registry;
  countdownMs?: number;
  /** Injected clock (ms). */
  now?: () => number;
}

/** A running edge identity. */
export interface EdgeIdentity {
  /** The edge's SPIFFE ID (its SVID's). */
  callerId: string;
  trustDomain: string;
  /** The xDS sink's hook: endpoint identities from the config's Pods. */
  decorate(ir: IR, objects: readonly KubeObject[]): IR;
  /** The SDS secrets: own SVID and every trust bundle. */
  secrets(): NamedResource[];
  /** Calls `listener` after each change of the SVID or bundles (the sink re-serves its secrets). */
  onChange(listener: () => void): void;
  close(): void;
}

/**
 * The edge sink's `decorate` hook for `scheme`: endpoint identities from the config's Pods, with
 * its own memo, so a cluster whose endpoints and identities did not change keeps its endpoints
 * array (and the translator its encoded ClusterLoadAssignment).
 */
export function identityDecorator(
  scheme: IdentityScheme,
): (ir: IR, objects: readonly KubeObject[]) => IR {
  const memo = new IdentityDecorations();
  return (ir, objects) =>
    withIdentities(
      ir,
      podIdentities(objects, scheme),
      plaintextServices(objects),
      outsideMeshPods(objects, scheme),
      memo,
    );
}

/** Starts the Workload API stream and waits for the edge's first SVID in the trust domain. */
export async function startEdgeIdentity(o: EdgeIdentityOptions): Promise<EdgeIdentity> {
  const scheme = identityScheme(o.trustDomain, o.template, o.outsideNamespaces);
  const now = o.now ?? Date.now;
  const health = o.metrics && new SvidHealth(o.metrics, o.logger);
  let current: WorkloadUpdate | undefined;
  let listener: (() => void) | undefined;
  let first: (() => void) | undefined;
  const ready = new Promise<void>((r) => first = r);
  const mine = (u: WorkloadUpdate) =>
    u.svids.find((s) => parseSpiffeId(s.spiffeId).trustDomain === o.trustDomain);
  const client = new WorkloadApiClient({
    socket: o.socket,
    logger: o.logger,
    onUpdate: (u) => {
      const svid = mine(u);
      if (!svid) {
        o.logger.error("the Workload API gave no SVID in the trust domain", {
          trustDomain: o.trustDomain,
          got: u.svids.map((s) => s.spiffeId),
        });
        return;
      }
      const changed = current !== undefined;
      current = u;
      health?.observe(svid, now());
      o.logger.info("own SVID", {
        spiffeId: svid.spiffeId,
        expiresAt: new Date(svid.expiresAt).toISOString(),
      });
      first?.();
      if (changed) listener?.();
    },
  });
  const timeoutMs = o.timeoutMs ?? 60_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) =>
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `no SVID from the Workload API at ${o.socket} after ${timeoutMs} ms: ` +
              "register a SPIRE entry for this agent (its selectors) in trust domain " +
              o.trustDomain,
          ),
        ),
      timeoutMs,
    )
  );
  try {
    await Promise.race([ready, timedOut]);
  } catch (e) {
    client.close();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  const callerId = mine(current!)!.spiffeId;
  // Gauges while SPIRE may be away; an expired SVID is said once (pods refuse it: fail closed).
  let expiredSaid: string | undefined;
  const tick = setInterval(() => {
    const svid = current && mine(current);
    if (!svid) return;
    if (svid.expiresAt > now()) return health?.observe(svid, now());
    health?.clear(svid.spiffeId);
    if (expiredSaid === svid.certChainPem) return;
    expiredSaid = svid.certChainPem;
    o.logger.error(
      "own SVID expired and the Workload API sent no new one: pods refuse this edge's mTLS " +
        "hops until it does (is this node's spire-agent running, and its server reachable?)",
      { spiffeId: svid.spiffeId, expiredAt: new Date(svid.expiresAt).toISOString() },
    );
  }, o.countdownMs ?? 10_000);
  return {
    callerId,
    trustDomain: o.trustDomain,
    decorate: identityDecorator(scheme),
    secrets: () => {
      const svid = current && mine(current);
      return [
        ...(svid?.spiffeId === callerId ? [svidSecret(svid)] : []),
        ...(current?.bundles ?? []).map(bundleSecret),
      ];
    },
    onChange: (l) => listener = l,
    close: () => {
      clearInterval(tick);
      client.close();
    },
  };
}
