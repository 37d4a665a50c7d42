/**
 * Neutral helpers over plain JSON-shaped data: deep clone, equality, object tests.
 * @module
 */
export { cloneData, equalData, isObject } from "./clone.ts";
