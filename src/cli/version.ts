/** This package's version (package.json is two folders up from the sources and from the bundle alike). */
import { readFileSync } from 'node:fs';

export const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
