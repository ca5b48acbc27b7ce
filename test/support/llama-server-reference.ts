import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const DIR = new URL('./llama-server-reference/', import.meta.url).pathname;

/** A capture of what a real llama-server answers (`test/support/llama-server-reference/`). */
export const referenceText = (file: string): string => readFileSync(join(DIR, file), 'utf8');
export const referenceJson = <T = any>(file: string): T => JSON.parse(referenceText(file)) as T;
