/**
 * GatewayClass and Gateway evaluation: which classes and Gateways are ours, each listener's
 * Accepted / ResolvedRefs / Conflicted outcome, supported kinds and TLS certificates, and the
 * status objects (written after route attachment has counted attachedRoutes).
 * @module
 */
import { type GatewayAddresses, gatewayAddresses, LOOPBACK_ADDRESSES } from "./addresses.ts";
import { ConditionFactory, fail, type Outcome, pass } from "./status/mod.ts";
import { referenceAllowed } from "./refs.ts";
import { byAge, keyOf, type Obj, type ObjectIndex } from "./object_index.ts";
import { ROUTE_KINDS } from "./routes/registry.ts";
import type { RouteKindDef } from "./routes/kind.ts";
import type { IRSecret } from "../ir/mod.ts";
import {
  GATEWAY_GROUP,
  type GatewayClassStatus,
  type GatewaySpec,
  type GatewayStatus,
  type Listener,
  type RouteGroupKind,
} from "./types.ts";

/** Features of Gateways themselves; each route kind adds its own (RouteKindDef.features). */
const GATEWAY_FEATURES = [
  "Gateway",
  "GatewayHTTPListenerIsolation",
  "GatewayPort8080",
  "GatewayStaticAddresses",
  "ReferenceGrant",
];

/** The GatewayClass supportedFeatures of aether serving `kinds`, sorted. */
export function supportedFeatures(kinds: readonly RouteKindDef[]): string[] {
  return [...GATEWAY_FEATURES, ...kinds.flatMap((k) => k.features)].sort();
}

/** Features aether implements, reported in GatewayClass status.supportedFeatures. */
export const SUPPORTED_FEATURES: readonly string[] = supportedFeatures(ROUTE_KINDS);

/** One Gateway listener with everything attachment and IR building need. */
export interface ListenerState {
  gateway: Obj<GatewaySpec>;
  listener: Listener;
  /** `<ns>/<gateway>/<listener name>`. */
  id: string;
  supportedKinds: RouteGroupKind[];
  accepted: Outcome;
  resolvedRefs: Outcome;
  conflicted: Outcome;
  /** IRSecret names of its certificates (HTTPS and TLS Terminate, when all resolve). */
  certificateSecrets: string[];
  /** Addresses it binds: its Gateway's (none when they are not usable). */
  addresses: string[];
  /** Whether the listener gets data-plane config. */
  programmed: boolean;
  /** Routes attached (Accepted) to this listener; filled in by attachment. */
  attachedRoutes: number;
}

/** One of our Gateways with its listeners. */
export interface GatewayState {
  gateway: Obj<GatewaySpec>;
  listeners: ListenerState[];
  addresses: GatewayAddresses;
}

const decode = (b64: string): string => {
  const bin = atob(b64);
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
};

/** Reads a kubernetes.io/tls Secret's PEM pair; a string error when it is not usable. */
function tlsSecret(indexed: ObjectIndex, ns: string, name: string): IRSecret | string {
  const secret = indexed.secrets.get(`${ns}/${name}`);
  if (!secret) return `Secret ${ns}/${name} not found`;
  if (secret.type !== "kubernetes.io/tls") {
    return `Secret ${ns}/${name} is of type ${secret.type}, not kubernetes.io/tls`;
  }
  const value = (key: string): string | undefined => {
    if (secret.stringData?.[key] !== undefined) return secret.stringData[key];
    const data = secret.data?.[key];
    if (data === undefined) return undefined;
    try {
      return decode(data);
    } catch {
      return undefined;
    }
  };
  const cert = value("tls.crt"), key = value("tls.key");
  if (!cert?.includes("-----BEGIN ") || !key?.includes("-----BEGIN ")) {
    return `Secret ${ns}/${name} lacks a PEM tls.crt and tls.key`;
  }
  return { name: `${ns}/${name}`, certificateChain: cert, privateKey: key };
}

function supportedKinds(
  l: Listener,
  routeKinds: readonly RouteKindDef[],
): { kinds: RouteGroupKind[]; invalid: string[] } {
  const served = routeKinds.filter((k) => (k.protocols as readonly string[]).includes(l.protocol))
    .map((k) => k.kind);
  if (served.length === 0) return { kinds: [], invalid: [] };
  const asked = l.allowedRoutes?.kinds;
  if (!asked || asked.length === 0) {
    return { kinds: served.map((kind) => ({ group: GATEWAY_GROUP, kind })), invalid: [] };
  }
  const ok = (k: RouteGroupKind) =>
    (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && served.includes(k.kind);
  return {
    kinds: asked.filter(ok).map((k) => ({ group: GATEWAY_GROUP, kind: k.kind })),
    invalid: asked.filter((k) => !ok(k)).map((k) => `${k.group ?? GATEWAY_GROUP}/${k.kind}`),
  };
}

function certificates(
  indexed: ObjectIndex,
  gw: Obj<GatewaySpec>,
  l: Listener,
  secrets: Map<string, IRSecret>,
) {
  const names: string[] = [];
  for (const ref of l.tls?.certificateRefs ?? []) {
    const ns = ref.namespace ?? gw.metadata.namespace;
    if ((ref.group ?? "") !== "" || (ref.kind ?? "Secret") !== "Secret") {
      return {
        outcome: fail(
          "InvalidCertificateRef",
          `certificateRef ${ref.group}/${ref.kind} ${ref.name} is not a core Secret`,
        ),
        names,
      };
    }
    const allowed = referenceAllowed(
      indexed,
      { group: GATEWAY_GROUP, kind: "Gateway", namespace: gw.metadata.namespace },
      { group: "", kind: "Secret", namespace: ns, name: ref.name },
    );
    if (!allowed) {
      return {
        outcome: fail(
          "RefNotPermitted",
          `no ReferenceGrant in ${ns} allows Gateway ${keyOf(gw)} to use Secret ${ns}/${ref.name}`,
        ),
        names,
      };
    }
    const secret = tlsSecret(indexed, ns, ref.name);
    if (typeof secret === "string") {
      return { outcome: fail("InvalidCertificateRef", secret), names };
    }
    secrets.set(secret.name, secret);
    names.push(secret.name);
  }
  return { outcome: pass("ResolvedRefs", "all references resolved"), names };
}

/**
 * Finds our GatewayClasses and Gateways and evaluates every listener, including conflicts across
 * all our Gateways binding the same address (spec.addresses, else the default bind address;
 * with `ownProxies` only within each Gateway, which then has a proxy of its own): an
 * address:port keeps the protocol of its oldest claimant, and there a hostname belongs to the
 * oldest Gateway that lists it.
 * Certificates of HTTPS and TLS Terminate listeners are added to `secrets`.
 */
export function evaluateGateways(
  indexed: ObjectIndex,
  controllerName: string,
  secrets: Map<string, IRSecret>,
  routeKinds: readonly RouteKindDef[] = ROUTE_KINDS,
  addressing: { bindAddress: string; usable: readonly string[]; ownProxies?: boolean } = {
    bindAddress: "127.0.0.1",
    usable: LOOPBACK_ADDRESSES,
  },
): { classes: string[]; gateways: GatewayState[] } {
  const classes = [...indexed.gatewayClasses.values()]
    .filter((c) => c.spec.controllerName === controllerName)
    .map((c) => c.metadata.name)
    .sort();
  const ours = indexed.gateways.filter((g) => classes.includes(g.spec.gatewayClassName)).sort(
    byAge,
  );
  /** Per `<address>|<port>`: the protocol holding it. */
  const portProtocol = new Map<string, string>();
  /** Per `<address>|<port>/<protocol>/<hostname>`: the Gateway and listener holding it. */
  const hostOwner = new Map<string, { gw: string; id: string }>();
  const gateways: GatewayState[] = [];
  for (const gw of ours) {
    const addresses = gatewayAddresses(gw.spec, addressing.bindAddress, addressing.usable);
    const protocolsHere = new Map<number, Set<string>>();
    for (const l of gw.spec.listeners) {
      if (!protocolsHere.has(l.port)) protocolsHere.set(l.port, new Set());
      protocolsHere.get(l.port)!.add(l.protocol);
    }
    const listeners = gw.spec.listeners.map((l): ListenerState => {
      const { kinds, invalid } = supportedKinds(l, routeKinds);
      // A protocol is supported when a served route kind attaches to it (TLS, TCP and UDP only
      // while their route kind's CRD is installed).
      const supported = routeKinds.some((k) =>
        (k.protocols as readonly string[]).includes(l.protocol)
      );
      let accepted = supported ? pass("Accepted", "listener accepted") : fail(
        "UnsupportedProtocol",
        `protocol ${l.protocol} is not supported${
          ["TLS", "TCP", "UDP"].includes(l.protocol)
            ? ` (its route kind's CRD is not installed)`
            : ""
        }`,
      );
      let conflicted = pass("NoConflicts", "no conflicts");
      if (supported) {
        // With a proxy per Gateway, an address:port is that Gateway's alone.
        const scope = addressing.ownProxies ? `${keyOf(gw)}#` : "";
        const ports = addresses.bind.map((a) => `${scope}${a}|${l.port}`);
        const claimed = ports.map((p) => portProtocol.get(p)).find((p) => p !== undefined);
        // TCP and UDP listeners have no hostname to tell them apart: one per port.
        const hostname = l.protocol === "TCP" || l.protocol === "UDP" ? "" : l.hostname ?? "";
        const hostKeys = ports.map((p) => `${p}/${l.protocol}/${hostname}`);
        const owner = hostKeys.map((k) => hostOwner.get(k)).find((o) => o !== undefined);
        if (protocolsHere.get(l.port)!.size > 1 || (claimed && claimed !== l.protocol)) {
          conflicted = fail("ProtocolConflict", `port ${l.port} is used with another protocol`);
        } else if (owner) {
          conflicted = fail(
            "HostnameConflict",
            l.protocol === "TCP" || l.protocol === "UDP"
              ? `${l.protocol} port ${l.port} belongs to listener ${owner.id}`
              : `hostname "${l.hostname ?? "*"}" on port ${l.port} belongs to Gateway ${owner.gw}`,
          );
        }
        if (!conflicted.ok) accepted = fail("PortUnavailable", conflicted.message);
        else {
          for (const p of ports) portProtocol.set(p, l.protocol);
          const id = { gw: keyOf(gw), id: `${keyOf(gw)}/${l.name}` };
          for (const k of hostKeys) hostOwner.set(k, id);
        }
      }
      // conflicted holds ok=true when there is NO conflict; flip it for the Conflicted condition.
      conflicted = { ...conflicted, ok: !conflicted.ok };
      let resolvedRefs = invalid.length > 0
        ? fail("InvalidRouteKinds", `unsupported route kinds: ${invalid.join(", ")}`)
        : pass("ResolvedRefs", "all references resolved");
      let certificateSecrets: string[] = [];
      const terminates = l.protocol === "HTTPS" ||
        (l.protocol === "TLS" && (l.tls?.mode ?? "Terminate") === "Terminate");
      if (terminates && accepted.ok) {
        const local = new Map<string, IRSecret>();
        const certs = certificates(indexed, gw, l, local);
        if (!certs.outcome.ok) resolvedRefs = certs.outcome;
        else {
          certificateSecrets = certs.names;
          for (const [k, v] of local) secrets.set(k, v);
        }
      }
      const certsOk = !terminates ||
        (resolvedRefs.ok || resolvedRefs.reason === "InvalidRouteKinds");
      return {
        gateway: gw,
        listener: l,
        id: `${keyOf(gw)}/${l.name}`,
        supportedKinds: kinds,
        accepted,
        resolvedRefs,
        conflicted,
        certificateSecrets,
        addresses: addresses.bind,
        programmed: accepted.ok && !conflicted.ok && certsOk && kinds.length > 0 &&
          addresses.bind.length > 0,
        attachedRoutes: 0,
      };
    });
    gateways.push({ gateway: gw, listeners, addresses });
  }
  return { classes, gateways };
}

/** Status of one of our GatewayClasses. */
export function gatewayClassStatus(
  generation: number,
  now: string,
  features: readonly string[] = SUPPORTED_FEATURES,
): GatewayClassStatus {
  const c = new ConditionFactory(generation, now);
  return {
    conditions: [c.of("Accepted", pass("Accepted", "accepted by aether"))],
    supportedFeatures: features.map((name) => ({ name })),
  };
}

/** Status of one of our Gateways (after attachment counted attachedRoutes). */
export function gatewayStatus(state: GatewayState, now: string): GatewayStatus {
  const c = new ConditionFactory(state.gateway.metadata.generation ?? 0, now);
  const accepted = state.listeners.filter((l) => l.accepted.ok).length;
  const programmed = state.listeners.filter((l) => l.programmed).length;
  const total = state.listeners.length;
  const problem = state.addresses.problem;
  let gwAccepted = accepted === total ? pass("Accepted", "all listeners accepted") : {
    ok: accepted > 0,
    reason: "ListenersNotValid",
    message: `${total - accepted} of ${total} listeners are not valid`,
  };
  if (problem?.condition === "Accepted") gwAccepted = problem;
  let gwProgrammed = programmed > 0
    ? pass("Programmed", `${programmed} of ${total} listeners programmed`)
    : fail("Invalid", "no listener can be programmed");
  if (problem) {
    gwProgrammed = problem.condition === "Programmed" ? problem : fail("Invalid", problem.message);
  }
  return {
    addresses: programmed > 0
      ? state.addresses.bind.map((value) => ({ type: "IPAddress", value }))
      : [],
    conditions: [c.of("Accepted", gwAccepted), c.of("Programmed", gwProgrammed)],
    listeners: state.listeners.map((l) => ({
      name: l.listener.name,
      supportedKinds: l.supportedKinds,
      attachedRoutes: l.attachedRoutes,
      conditions: [
        c.of("Accepted", l.accepted),
        c.of("Conflicted", l.conflicted),
        c.of(
          "Programmed",
          l.programmed
            ? pass("Programmed", "listener programmed")
            : problem
            ? fail("Invalid", `listener is not programmed: ${problem.message}`)
            : fail("Invalid", "listener is not programmed"),
        ),
        c.of("ResolvedRefs", l.resolvedRefs),
      ],
    })),
  };
}
