/**
 * The pure edits of a node's CNI configuration for the chained plugin: which file the runtime
 * uses (the first of the conf dir in lexical order, as containerd with `max_conf_num = 1` and
 * libcni's `ConfFiles` pick it), the plugin's entry, and inserting it into that file (any older
 * aether entry removed first; a single-plugin `.conf` wrapped into a `.conflist`) or removing it.
 * The list's `cniVersion` is left as the primary CNI wrote it (containerd 1.6: "1.0.0").
 * @module
 */
import {
  DEFAULT_SOCKET_PATH,
  DEFAULT_TIMEOUT_SECONDS,
  type PluginKeys,
  POD_ANNOTATIONS_CAPABILITY,
} from "./conf.ts";
import { PLUGIN_TYPE } from "./spec.ts";

/** The file name endings libcni reads as network configurations. */
export const CONF_EXTENSIONS: readonly string[] = [".conf", ".conflist", ".json"];

/** Whether `name` is a network configuration file (by its ending). */
export const isConfFile = (name: string): boolean =>
  CONF_EXTENSIONS.some((e) => name.endsWith(e)) && !name.startsWith(".");

/** The file the runtime uses: the first configuration file in lexical (byte) order. */
export function primaryFile(names: readonly string[]): string | undefined {
  return names.filter(isConfFile).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[0];
}

/** The plugin's conflist entry. */
export function pluginEntry(keys: PluginKeys = {}): Record<string, unknown> {
  return {
    type: PLUGIN_TYPE,
    socketPath: keys.socketPath ?? DEFAULT_SOCKET_PATH,
    timeoutSeconds: keys.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    ...(keys.excludeNamespaces ? { excludeNamespaces: [...keys.excludeNamespaces] } : {}),
    capabilities: { [POD_ANNOTATIONS_CAPABILITY]: true },
  };
}

/** An edited configuration file: its (possibly new) name and text, and the name it replaces. */
export interface EditedConf {
  name: string;
  text: string;
  /** Set when the edit renamed the file (a `.conf` became a `.conflist`): remove this one. */
  replaces?: string;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const isOurs = (p: unknown) => isObject(p) && p.type === PLUGIN_TYPE;

/** Parses a configuration file: a list (`plugins`) or a single plugin (`type`); else why not. */
export function parseConfFile(text: string): { list: Json } | { single: Json } | { error: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { error: `not JSON: ${(e as Error).message}` };
  }
  if (!isObject(v)) return { error: "not a JSON object" };
  if (Array.isArray(v.plugins)) {
    if (v.plugins.filter((p) => !isOurs(p)).length === 0) return { error: "it lists no plugin" };
    return { list: v };
  }
  if (typeof v.type === "string" && v.type !== "") return { single: v };
  return { error: "neither a plugin list nor a plugin" };
}

const render = (v: Json) => JSON.stringify(v, null, 2) + "\n";

/** Whether two JSON values are the same value (key order aside). */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((x, i) => sameJson(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
  }
  return a === b;
}

/**
 * `text` of file `name` with `entry` as its only aether plugin, appended after the primary's own
 * plugins; undefined when it holds exactly that already (so a watcher's own write does not write
 * again, and another chained plugin appended after ours is left alone). A `.conf` (one plugin) is
 * wrapped into a list of the same name and version, written as `<name>.conflist`.
 */
export function withEntry(
  name: string,
  text: string,
  entry: Json,
): EditedConf | { error: string } | undefined {
  const parsed = parseConfFile(text);
  if ("error" in parsed) return parsed;
  if ("list" in parsed) {
    const plugins = parsed.list.plugins as unknown[];
    const ours = plugins.filter(isOurs);
    if (ours.length === 1 && sameJson(ours[0], entry)) return undefined;
    return {
      name,
      text: render({ ...parsed.list, plugins: [...plugins.filter((p) => !isOurs(p)), entry] }),
    };
  }
  const single = parsed.single;
  const list: Json = {
    ...(single.cniVersion !== undefined ? { cniVersion: single.cniVersion } : {}),
    ...(single.name !== undefined ? { name: single.name } : {}),
    plugins: [single, entry],
  };
  const stem = name.replace(/\.(conf|conflist|json)$/, "");
  return { name: `${stem}.conflist`, text: render(list), replaces: name };
}

/** `text` without aether's plugin; undefined when it has none (or is not a configuration). */
export function withoutEntry(text: string): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(v) || !Array.isArray(v.plugins) || !v.plugins.some(isOurs)) return undefined;
  return render({ ...v, plugins: v.plugins.filter((p) => !isOurs(p)) });
}
