/**
 * What `ugs doctor` runs, loaded by its command with one `import()`: the build makes this a chunk
 * of its own (dist/doctor-index.cjs), so no other command parses or runs doctor's code.
 */

export { realNetwork } from '../transport/network.js';
export { runChecks } from './checks.js';
