/**
 * Admission: what the API server does to each object on create (CRD defaults, then schema and CEL
 * validation). Memoized per input object in the caller's memo (a ResolveState's), so a resolve
 * after an edit only admits the objects the edit replaced: sources hand unchanged objects over by
 * identity (the Source contract). Input objects must therefore not be mutated after they are
 * passed to resolve — the same contract the xDS encoder has.
 * @module
 */
import { IdentityMemo } from "../../memo/mod.ts";
import type { AdmissionKinds } from "./kinds.ts";
import type { CelEvaluator } from "./structural_schema.ts";
import type { KubeObject, Problem } from "../types.ts";
import { admitObject, isServedKind } from "./validate.ts";

/** One object admitted: the defaulted copy, or the problems that keep it out. */
export type Admitted = { obj: KubeObject; problems?: never } | { obj?: never; problems: Problem[] };

function admitOne(
  raw: KubeObject,
  kinds: AdmissionKinds,
  memo: IdentityMemo<KubeObject, Admitted>,
  cel: CelEvaluator | undefined,
): Admitted {
  // peek/set rather than get(make): no closure per object on this hot path.
  const seen = memo.peek(raw);
  memo.count(seen !== undefined);
  if (seen) return seen;
  const { obj, problems } = admitObject(raw, kinds, cel);
  const done: Admitted = problems.length > 0 ? { problems } : { obj };
  memo.set(raw, done);
  return done;
}

/**
 * The defaulted objects the API server would accept, in input order; every other object's
 * problems are appended to `problems` (an object of a kind not in `kinds` is one of them). The
 * returned objects are shared between resolves: treat them as read-only. With `admitted` (the
 * objects came from the Kubernetes API server, which defaulted and validated them already), an
 * object of a served kind and apiVersion is taken as it is, without walking its schema again; any
 * other is admitted as usual (and so reported). `cel` evaluates the rules that run on the CEL
 * library: an object reaching one throws CelNotLoaded while it is not loaded (the objects
 * admitted before it stay remembered in `memo`). One `memo` serves one `kinds`.
 */
export function admit(
  objects: KubeObject[],
  problems: Problem[],
  kinds: AdmissionKinds,
  admitted = false,
  memo: IdentityMemo<KubeObject, Admitted> = new IdentityMemo(),
  cel?: CelEvaluator,
): KubeObject[] {
  const valid: KubeObject[] = [];
  for (let i = 0; i < objects.length; i++) {
    const raw = objects[i];
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      problems.push({
        kind: "(unknown)",
        name: `#${i}`,
        field: "",
        message: "not a Kubernetes object",
      });
      continue;
    }
    if (admitted && isServedKind(raw, kinds)) {
      valid.push(raw);
      continue;
    }
    const done = admitOne(raw, kinds, memo, cel);
    if (done.obj) valid.push(done.obj);
    else problems.push(...done.problems.map((p) => ({ ...p })));
  }
  return valid;
}
