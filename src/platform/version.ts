import packageJson from '../../package.json' with { type: 'json' };

export const VERSION: string = packageJson.version;

export function userAgent(nodeVersion: string): string {
  return `ugs/${VERSION} node/${nodeVersion.replace(/^v/, '')}`;
}
