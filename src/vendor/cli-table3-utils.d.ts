// cli-table3 ships no types for its width measure; this is the one function ugs uses.
declare module 'cli-table3/src/utils.js' {
  const utils: { strlen(text: string): number };
  export default utils;
}
