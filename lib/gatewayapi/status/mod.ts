/**
 * Gateway API status as data: condition builders with the spec's reasons, and the merge that keeps a condition's lastTransitionTime until its status changes.
 * @module
 */
export { ConditionFactory, fail, type Outcome, pass } from "./conditions.ts";
export { mergeConditions, mergeStatus, parentKey, withOtherParents } from "./merge.ts";
