/**
 * The project's names for test code and test data (pure), shared by the structure test, the
 * shipped-closure test and the image's file selection:
 * - a test is `*_test.ts`;
 * - private test support is `_test_utils.ts` or `_<topic>_test_utils.ts`;
 * - test data is anything under a `testdata/` folder.
 * @module
 */

/** Whether `path` is a test (`*_test.ts`). */
export const isTest = (path: string): boolean => path.endsWith("_test.ts");

/** Whether `path` is private test support: `_test_utils.ts` or `_<topic>_test_utils.ts`. */
export const isTestSupport = (path: string): boolean => /(^|\/)_(\w+_)?test_utils\.ts$/.test(path);

/** Whether `path` lies under a `testdata/` folder. */
export const isTestData = (path: string): boolean => /(^|\/)testdata\//.test(path);
