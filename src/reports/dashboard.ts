/** `pool-export dashboard`: the lake's figures as one self-contained HTML file, written to a temporary name and renamed. */
import { existsSync } from 'node:fs';
import { dataFolder } from '../config/data-folder.ts';
import type { TrackedSettings } from '../config/tracked.ts';
import { writeFileAtomic } from '../util/atomic-file.ts';
import { dashboardData, hasData } from './dashboard-data.ts';
import type { DashboardFilter } from './dashboard-filter.ts';
import { dashboardHtml, emptyDashboardHtml } from './dashboard-page.ts';
import { openLakeDb } from './views.ts';

/** What was written: the file, and whether the lake had anything to show. */
export interface DashboardWritten {
  readonly file: string;
  readonly empty: boolean;
  readonly bytes: number;
}

/** Makes the page of a data folder's lake and writes it to `out` (temporary file, then rename). */
export async function writeDashboard(
  dataDir: string,
  out: string,
  opts: { filter?: DashboardFilter; tracked?: TrackedSettings; now?: Date } = {},
): Promise<DashboardWritten> {
  const now = opts.now ?? new Date();
  let html: string | undefined;
  let empty = true;
  if (existsSync(dataFolder(dataDir).lake)) {
    const db = await openLakeDb(dataDir, opts.tracked);
    try {
      const data = await dashboardData(db.conn, dataDir, { filter: opts.filter ?? {}, now });
      if (hasData(data)) {
        html = dashboardHtml(data, dataDir);
        empty = false;
      }
    } finally {
      db.close();
    }
  }
  html ??= emptyDashboardHtml(dataDir, now.toISOString());
  writeFileAtomic(out, html);
  return { file: out, empty, bytes: Buffer.byteLength(html) };
}
