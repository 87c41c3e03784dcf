import Table from 'cli-table3';
import tableUtils from 'cli-table3/src/utils.js';

/** Columns cli-table3 gives a text: what it pads to and truncates at. */
const cellWidth: (text: string) => number = tableUtils.strlen;

export { cellWidth, Table };
