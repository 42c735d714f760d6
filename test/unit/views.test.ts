/** The report views' catalogue, read from the SQL files' headers (an oracle parsed here, separately). */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { reportViews } from '../../src/reports/views.ts';

const DIR = new URL('../../sql/views/', import.meta.url);

describe('the report views', () => {
  it('are every SQL file of sql/views in name order, with the name, question and grain of its header', () => {
    const files = readdirSync(DIR)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    expect(files.length).toBeGreaterThanOrEqual(14);
    const views = reportViews();
    expect(views.map((v) => v.sql)).toEqual(files.map((f) => readFileSync(new URL(f, DIR), 'utf8')));
    for (const [i, v] of views.entries()) {
      const header = (k: string) =>
        v.sql
          .split('\n')
          .find((l) => l.startsWith(`-- ${k}: `))!
          .slice(`-- ${k}: `.length)
          .trim();
      expect(v.name, files[i]).toBe(header('name'));
      expect(v.answers, files[i]).toBe(header('answers'));
      expect(v.grain, files[i]).toBe(header('grain'));
      expect(v.sql).toContain(`CREATE OR REPLACE VIEW reports.${v.name}`);
    }
  });
});
