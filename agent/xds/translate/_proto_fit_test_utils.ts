/**
 * Test support (the proto fit check): a strict fit check of a fromObject-form resource against the Envoy protos.
 * protobufjs `verify` ignores unknown keys and does not look inside `Any`; this walks every key,
 * descends into Any by its `@type`, and checks enum numbers, so a misspelt field cannot be
 * dropped silently on encode.
 * @module
 */
import protobuf from "protobufjs";
import { envoyRoot, typeUrlPrefix } from "../proto.ts";

/** Problems found in `value` as message type `fullName` (empty = fits). */
export function protoFitProblems(fullName: string, value: unknown, path = ""): string[] {
  const type = envoyRoot().lookupType(fullName);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return [`${path || "."}: ${type.name} expects an object`];
  }
  const obj = value as Record<string, unknown>;
  if (type.fullName === ".google.protobuf.Any") {
    const url = obj["@type"];
    if (typeof url !== "string" || !url.startsWith(typeUrlPrefix)) {
      return [`${path}: Any without a valid @type`];
    }
    const { "@type": _t, ...rest } = obj;
    return protoFitProblems(url.slice(typeUrlPrefix.length), rest, `${path}<${url}>`);
  }
  const problems: string[] = [];
  for (const [key, v] of Object.entries(obj)) {
    const field = type.fields[key];
    const at = `${path}.${key}`;
    if (!field) {
      problems.push(`${at}: no field ${key} in ${type.fullName}`);
      continue;
    }
    field.resolve();
    if (field instanceof protobuf.MapField) {
      for (const [k, mv] of Object.entries(v as Record<string, unknown>)) {
        problems.push(...fieldValueProblems(field, mv, `${at}[${k}]`));
      }
    } else if (field.repeated) {
      if (!Array.isArray(v)) problems.push(`${at}: expected a list`);
      else v.forEach((item, i) => problems.push(...fieldValueProblems(field, item, `${at}[${i}]`)));
    } else {
      problems.push(...fieldValueProblems(field, v, at));
    }
  }
  return problems;
}

function fieldValueProblems(field: protobuf.Field, v: unknown, at: string): string[] {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Type) return protoFitProblems(rt.fullName.slice(1), v, at);
  if (rt instanceof protobuf.Enum) {
    return typeof v === "number" && Object.values(rt.values).includes(v)
      ? []
      : [`${at}: ${JSON.stringify(v)} is not a value of ${rt.fullName}`];
  }
  const ok = field.type === "string" || field.type === "bytes"
    ? typeof v === "string"
    : field.type === "bool"
    ? typeof v === "boolean"
    : typeof v === "number";
  return ok ? [] : [`${at}: expected ${field.type}, got ${JSON.stringify(v)}`];
}
