import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "controls-migrate";

interface PackageJson {
  readonly name?: string;
  readonly version?: string;
}

/** The package's root folder and its package.json, found by walking up from `from`. */
function findPackage(from: string): { root: string; pkg: PackageJson } {
  let dir = dirname(from);
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as PackageJson;
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === "string") return { root: dir, pkg };
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`${PACKAGE_NAME}: no package.json found above ${from}`);
    dir = up;
  }
}

/**
 * The version in the package's own package.json, found by walking up from this module: the same
 * code runs as `src/version.ts` (sources), `dist/src/version.js` (built) and from an installed tarball.
 * The version is written once, in package.json.
 *
 * @example
 *   readPackageVersion() // "0.1.0"
 */
export function readPackageVersion(from: string = fileURLToPath(import.meta.url)): string {
  return findPackage(from).pkg.version as string;
}

/** The folder of the package's package.json: the repository, or the installed package. */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  return findPackage(from).root;
}

/** True for a command line that only asks for the version. */
export const asksVersionOnly = (args: readonly string[]): boolean =>
  args.length === 1 && ["--version", "version", "-v"].includes(args[0] ?? "");

/** This tool's version, recorded with every run (`runs.tool_version`). */
export const TOOL_VERSION: string = readPackageVersion();
