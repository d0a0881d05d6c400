/**
 * Each named scenario generated with its fault and without (the same seed and
 * size), so a test can compare what the fault changed against the clean base.
 */
import { join } from "node:path";
import { type GeneratedDataDir, generateDataDir } from "../../src/gen/generate.js";

export interface ScenarioPair {
  faulty: GeneratedDataDir;
  base: GeneratedDataDir;
}

/** Generates `<root>/<name>` (with the fault) and `<root>/<name>-base` (without) for every name, tiny, seed 11. */
export async function generateScenarioPairs(root: string, names: readonly string[]): Promise<Map<string, ScenarioPair>> {
  const pairs = new Map<string, ScenarioPair>();
  await Promise.all(
    names.map(async (name) => {
      const options = { size: "tiny" as const, seed: 11 };
      const [faulty, base] = await Promise.all([
        generateDataDir(join(root, name), { ...options, scenario: name }),
        generateDataDir(join(root, `${name}-base`), options),
      ]);
      pairs.set(name, { faulty, base });
    }),
  );
  return pairs;
}
