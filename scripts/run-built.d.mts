/** Types of scripts/run-built.mjs, for the tests that import it. */
export declare const BUILD_INPUTS: readonly string[];
export declare const BUILD_OUTPUTS: readonly string[];
export declare function newestMtimeMs(path: string): number;
export declare function buildIsStale(root: string): boolean;
