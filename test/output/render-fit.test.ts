import { describe, expect, it } from 'vitest';
import { fitMessage } from '../../src/output/messages.js';
import { renderTable, type TableLayout } from '../../src/output/results.js';
import { plainStyle } from '../../src/output/style.js';
import { padColumns, wrapText } from '../../src/output/text.js';

const plain = plainStyle;

const TOKEN = 'f'.repeat(32) + '0'.repeat(32);
const ROWS: [string, string][] = [
  ['provided_id', 'acme'],
  ['name', 'Acme Corp'],
  ['team_id', '7'],
  ['token', TOKEN],
  ['api_environment_tag', 'Customer'],
  ['properties', JSON.stringify({ notes: 'lorem ipsum dolor sit amet '.repeat(8), plan: 'pro' })],
];

describe('renderTable fitted to a terminal', () => {
  for (let columns = 30; columns <= 200; columns += 7) {
    it(`${columns} columns: lines fit (the token's own line aside), the token is never split`, async () => {
      const layout: TableLayout = { kind: 'box', columns, ascii: false };
      const out = await renderTable(ROWS, plain, layout);
      const lines = out.split('\n');
      expect(
        lines.filter((line) => line.includes(TOKEN)),
        out,
      ).toHaveLength(1);
      for (const line of lines) {
        if (!line.includes(TOKEN)) expect(line.length, out).toBeLessThanOrEqual(columns);
      }
      // Only when the token cannot fit at all does its line exceed the width.
      const tokenLine = lines.find((line) => line.includes(TOKEN)) ?? '';
      if (columns >= 'token: '.length + 64) expect(tokenLine.length).toBeLessThanOrEqual(columns);
      // Nothing is lost: every word of the long value is there.
      expect(out.replace(/[\s│]/g, '')).toContain((ROWS[5]?.[1] ?? '').replace(/\s/g, ''));
    });
  }

  it('a box when it fits, key: value lines when it cannot', async () => {
    const wide = await renderTable(ROWS, plain, { kind: 'box', columns: 120, ascii: false });
    expect(wide.split('\n')[0]).toMatch(/^┌─+┬─+┐$/);
    const narrow = await renderTable(ROWS, plain, { kind: 'box', columns: 80, ascii: false });
    expect(narrow).not.toMatch(/[│┌]/);
    expect(narrow.split('\n')).toContain(`token: ${TOKEN}`);
  });

  it('ASCII borders on request, key<TAB>value lines for pipes', async () => {
    const ascii = await renderTable(ROWS.slice(0, 2), plain, {
      kind: 'box',
      columns: 80,
      ascii: true,
    });
    expect(ascii).toBe(
      [
        '+-------------+-----------+',
        '| provided_id | acme      |',
        '| name        | Acme Corp |',
        '+-------------+-----------+',
      ].join('\n'),
    );
    const lines = await renderTable(ROWS.slice(0, 2), plain, { kind: 'lines' });
    expect(lines).toBe('provided_id\tacme\nname\tAcme Corp');
  });
});

describe('wrapText', () => {
  it.each([
    ['a b c d e f', 3, ['a b', 'c d', 'e f']],
    ['{"a":"xx","b":"yy"}', 10, ['{"a":"xx",', '"b":"yy"}']],
    ['abcdefghij', 4, ['abcd', 'efgh', 'ij']],
    ['漢字漢字', 4, ['漢字', '漢字']],
    ['', 5, ['']],
  ])('%j at %i', (text, width, expected) => {
    const pieces = wrapText(text, width, width);
    expect(pieces.map((piece) => piece.text)).toEqual(expected);
    for (const piece of pieces) expect(piece.width).toBeLessThanOrEqual(width);
  });

  it('keeps colour codes whole and gives them no width', () => {
    const pieces = wrapText('\u001b[33mabc def\u001b[39m', 3, 3);
    expect(pieces.map((piece) => piece.width)).toEqual([3, 3]);
    expect(pieces.map((piece) => piece.text).join('')).toBe('\u001b[33mabcdef\u001b[39m');
  });
});

describe('padColumns', () => {
  it('escapes controls in every cell and pads by the escaped width', () => {
    const lines = padColumns([
      ['name', 'base URL'],
      ['work\u001b[2J\nfake', 'https://a.example'],
      ['x', 'y'],
    ]);
    expect(lines).toEqual([
      'name                     base URL',
      'work\\u001b[2J\\u000afake  https://a.example',
      'x                        y',
    ]);
  });
});

describe('fitMessage: a message at a terminal', () => {
  const token = 'a'.repeat(64);
  it('breaks at spaces so that every line fits', () => {
    const text = `note: ${Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ')}`;
    const lines = fitMessage(text, 40).split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(40);
    expect(lines.join(' ')).toBe(text);
  });
  it('keeps a word longer than a line whole (a token copies as one)', () => {
    const lines = fitMessage(`the new token is ${token} keep it safe`, 40).split('\n');
    expect(lines).toContain(token);
    expect(lines.join(' ')).toBe(`the new token is ${token} keep it safe`);
  });
  it('counts colour codes as no width, and leaves a line that fits alone', () => {
    const coloured = `\u001b[33mnote:\u001b[39m ${'x'.repeat(70)}`;
    expect(fitMessage(coloured, 80)).toBe(coloured);
  });
});
