// Types of scripts/notices.mjs, for the tests that call it.
export function bundledPackages(
  metafiles: readonly { inputs: Record<string, unknown> }[],
  root: string,
): string[];
export function noticesText(
  packageDirs: readonly string[],
  root: string,
  extra?: readonly { title: string; text: string }[],
): string;
