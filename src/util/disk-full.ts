/** A full disk, told as such: which folder, and what to do. */

/** True for the errors Node and DuckDB raise when a write finds no space. */
export function isDiskFull(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | undefined;
  return err?.code === 'ENOSPC' || /ENOSPC|No space left on device/i.test(String(err?.message ?? ''));
}

/** The message for a write that found the disk full, naming the data folder and the fix. */
export function diskFullMessage(dataDir: string, e: unknown): string {
  return `the disk holding the data folder ${dataDir} is full (${(e as Error).message}); free space there, or point --data-dir at a folder on another disk, and run again: batches committed before are kept and the next run resumes from them`;
}

/** The error's message, explained when it is a full disk. */
export function explainWriteError(dataDir: string, e: unknown): string {
  return isDiskFull(e) ? diskFullMessage(dataDir, e) : (e as Error).message;
}
