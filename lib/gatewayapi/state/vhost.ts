/**
 * Rendered virtual hosts, memoized: a virtual host renders to the same routes as long as the same
 * (memoized, read-only) converted routes place the same hostnames onto it for the same listener.
 * A resolve after a route edit then hands out the very IRVirtualHost objects of every untouched
 * domain, and translate and the xDS encoder, which memoize by object, skip them too. The objects
 * are shared between resolves: read-only. One VhostMemo per resolver (a ResolveState's).
 * @module
 */
import { IdentityMemo } from "../../memo/mod.ts";
import type { ConvertedRoute, ListenerContext } from "../routes/kind.ts";
import type { KubeObject } from "../types.ts";
import type { IRVirtualHost } from "../../ir/mod.ts";

/** One route placed on a virtual host: the route, its conversion, its most specific hostname. */
export type VhostInput = readonly [route: KubeObject, converted: ConvertedRoute, host: string];

/**
 * Where one virtual host was rendered and from what (build_ir.ts records them): what the edit
 * path (edit.ts) needs to render it again after some of its routes changed.
 */
export interface VhostSite {
  /** The owner listener's id. */
  readonly listenerId: string;
  readonly domain: string;
  readonly context: ListenerContext;
  readonly inputs: readonly VhostInput[];
  readonly vhost: IRVirtualHost;
}

interface Entry {
  port: number;
  protocol: string;
  inputs: readonly VhostInput[];
  vhost: IRVirtualHost;
}

const sameInputs = (a: readonly VhostInput[], b: readonly VhostInput[]) =>
  a.length === b.length &&
  a.every((x, i) => x[0] === b[i][0] && x[1] === b[i][1] && x[2] === b[i][2]);

/** Virtual hosts by the first input's conversion (so entries go when it does), then key. */
export class VhostMemo {
  readonly byConversion = new IdentityMemo<ConvertedRoute, Map<string, Entry>>();

  /**
   * `render(domain, context, inputs)`, or the virtual host rendered before from the same inputs
   * (a function, not a closure per virtual host: a hit allocates nothing but its key).
   */
  render(
    listenerId: string,
    domain: string,
    context: ListenerContext,
    inputs: readonly VhostInput[],
    render: (
      domain: string,
      context: ListenerContext,
      inputs: readonly VhostInput[],
    ) => IRVirtualHost,
  ): IRVirtualHost {
    if (inputs.length === 0) return render(domain, context, inputs);
    const key = `${listenerId}|${domain}`;
    let byKey = this.byConversion.peek(inputs[0][1]);
    const seen = byKey?.get(key);
    const hit = seen !== undefined && seen.port === context.port &&
      seen.protocol === context.protocol && sameInputs(seen.inputs, inputs);
    this.byConversion.count(hit);
    if (hit) return seen.vhost;
    const vhost = render(domain, context, inputs);
    if (!byKey) this.byConversion.set(inputs[0][1], byKey = new Map());
    byKey.set(key, { port: context.port, protocol: context.protocol, inputs, vhost });
    return vhost;
  }
}
