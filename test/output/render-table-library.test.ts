/**
 * A box that fits the terminal is cli-table3's drawing (the design names it); only a big table is
 * drawn by the linear renderer, and the two draw the same characters.
 */
import CliTable from 'cli-table3';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { renderTable, type TableLayout } from '../../src/output/results.js';
import { plainStyle } from '../../src/output/style.js';

/** What every cli-table3 table drawn through src/vendor/table.ts printed, in order. */
const drawnByLibrary = vi.hoisted((): string[] => []);

vi.mock('../../src/vendor/table.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/vendor/table.js')>();
  class RecordingTable extends real.Table {
    override toString(): string {
      const drawn = super.toString();
      drawnByLibrary.push(drawn);
      return drawn;
    }
  }
  return { ...real, Table: RecordingTable };
});

beforeEach(() => {
  drawnByLibrary.length = 0;
});

const plain = plainStyle;
// As chalk draws at level 1: each styled text opens and closes its own colour.
const colour = {
  ...plain,
  dim: (t: string) => `\u001b[2m${t}\u001b[22m`,
  cyan: (t: string) => `\u001b[36m${t}\u001b[39m`,
};

const TOKEN = 'f'.repeat(32) + '0'.repeat(32);
const ROWS: [string, string, ((t: string) => string)?][] = [
  ['provided_id', 'acme'],
  ['name', '株式会社 Acme 😀 and a name long enough to wrap at eighty columns'],
  ['team_id', 'null', colour.dim],
  ['token', TOKEN],
  ['api_environment_tag', 'Customer'],
  ['properties', JSON.stringify({ notes: 'lorem ipsum dolor sit amet '.repeat(6), plan: 'pro' })],
];

/** More rows than cli-table3 is given: the same table then comes from the linear renderer. */
const PADDING: [string, string][] = Array.from({ length: 250 }, (_, i) => [`k${i}`, 'v']);

describe('the box is drawn by cli-table3', () => {
  it('a small table is exactly what cli-table3 printed', async () => {
    const layout: TableLayout = { kind: 'box', columns: 120, ascii: false };
    const out = await renderTable(ROWS, plain, layout);
    expect(drawnByLibrary).toEqual([out]);
    expect(out.split('\n')[0]).toMatch(/^┌─+┬─+┐$/);
  });

  it('is the table cli-table3 draws for the same cells and options', async () => {
    const rows: [string, string][] = [
      ['provided_id', 'acme'],
      ['name', 'Acme Corp'],
    ];
    const out = await renderTable(rows, plain, { kind: 'box', columns: 80, ascii: true });
    const direct = new CliTable({
      colWidths: [13, 11],
      style: { head: [], border: [] },
      chars: {
        top: '-',
        'top-mid': '+',
        'top-left': '+',
        'top-right': '+',
        bottom: '-',
        'bottom-mid': '+',
        'bottom-left': '+',
        'bottom-right': '+',
        left: '|',
        middle: '|',
        right: '|',
        mid: '',
        'left-mid': '',
        'mid-mid': '',
        'right-mid': '',
      },
    });
    direct.push(...rows);
    expect(out).toBe(direct.toString());
    expect(drawnByLibrary).toEqual([out]);
  });

  it('a big table is drawn without cli-table3', async () => {
    const out = await renderTable([...ROWS, ...PADDING], plain);
    expect(drawnByLibrary).toEqual([]);
    expect(out.split('\n')).toHaveLength(ROWS.length + PADDING.length + 2);
  });

  it('a text cli-table3 measures differently is not cut: the linear renderer draws it', async () => {
    // A zero-width space takes no column on a terminal; cli-table3 counts one.
    const rows: [string, string][] = [['name', 'a\u200bb'.repeat(5)]];
    const out = await renderTable(rows, plain, { kind: 'box', columns: 80, ascii: false });
    expect(out).not.toContain('…');
    expect(out).toContain(`│ name │ ${'a\u200bb'.repeat(5)} │`);
    expect(drawnByLibrary).toEqual([]);
  });
});

describe('cli-table3 and the linear renderer draw the same box', () => {
  const layouts: TableLayout[] = [];
  for (let columns = 40; columns <= 200; columns += 9) {
    layouts.push({ kind: 'box', columns, ascii: false }, { kind: 'box', columns, ascii: true });
  }
  layouts.push({ kind: 'box', columns: Number.POSITIVE_INFINITY, ascii: false });

  for (const [name, style] of [
    ['plain', plain],
    ['coloured', colour],
  ] as const) {
    it.each(layouts)(`${name}, %j`, async (layout) => {
      const small = (await renderTable(ROWS, style, layout)).split('\n');
      const big = (await renderTable([...ROWS, ...PADDING], style, layout)).split('\n');
      const boxed = small[0]?.startsWith('+') || small[0]?.startsWith('┌');
      if (!boxed) {
        // Too narrow for a box: key: value lines, the same from both.
        expect(big.slice(0, small.length)).toEqual(small);
        return;
      }
      expect(drawnByLibrary, small.join('\n')).toHaveLength(1);
      // The big table's first rows and its bottom rule are the small table's lines.
      expect(big.slice(0, small.length - 1)).toEqual(small.slice(0, -1));
      expect(big.at(-1)).toBe(small.at(-1));
    });
  }
});
