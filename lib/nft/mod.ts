/**
 * The nftables rules of transparent capture, pure and shared by the CNI plugin and the agent:
 * one `inet aether` table per pod netns, rendered from a plain {@link CaptureSpec} into
 * libnftables JSON documents (full replace, incremental set sync, removal, listing), and a
 * listing parsed back into the spec it implements, for drift detection.
 *
 * ```ts
 * const doc = replaceTable({ vips: [{ address: "10.96.0.10", port: 80 }], capturePort: 15001 });
 * // … run JSON.stringify(doc) through libnftables in the pod netns, later:
 * const listed = parseTable(listingJson);
 * const drifted = !listed || listed.problems.length > 0 || !sameSpec(listed.spec, wanted);
 * ```
 * @module
 */
export { type IpAddress, parseIp } from "./addr.ts";
export {
  CHAIN,
  COMMENTS,
  deleteTable,
  listTable,
  MAPS,
  type NftCommand,
  type NftDocument,
  replaceTable,
  SETS,
  syncSets,
  TABLE,
} from "./build.ts";
export { type ListedTable, NftParseError, parseTable, type RuleCounter } from "./parse.ts";
export {
  type CaptureSpec,
  type DnsRedirect,
  NftSpecError,
  normalizeSpec,
  sameSpec,
  type UdpRedirect,
  type VipPort,
} from "./spec.ts";
