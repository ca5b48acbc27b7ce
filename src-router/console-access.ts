/**
 * The owner-only way into a running node's console without a secret on any command line (every local user can read
 * every process's command line). A node keeps a folder only its user can enter, `<store_dir>/console/`, holding:
 * - `access.json`: the running node's URL, PID and console token (owner-only, rewritten on every start, removed on a
 *   clean stop), read by `routerdesk console-link` to ask the node for a fresh one-time code;
 * - `open-console.html`: a page that sends the browser to the node with a one-time code. `serve`, `demo` and
 *   `console-link --open` start the browser on this file's path, never on a URL carrying a code.
 */
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { replaceFile } from './config/durable-file';

/** The owner-only folder of a node's console access files. */
export const consoleAccessDir = (storeDir: string) => join(storeDir, 'console');
export const ACCESS_FILE = 'access.json';
export const LINK_PAGE = 'open-console.html';

const accessRecordSchema = z
  .object({ url: z.string().url(), pid: z.number().int(), token: z.string().min(1) })
  .strict();
export type AccessRecord = z.infer<typeof accessRecordSchema>;

/**
 * Creates `dir` (and its parents) and makes sure only this user can enter it: a symlink or a folder of another user
 * at that name is refused (someone planted it), group and other permissions are taken away.
 */
export function ownerOnlyDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a folder (a symlink or a file stands there): remove it`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new Error(`${dir} belongs to another user (uid ${st.uid}): remove it, the console link folder must be yours`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return dir;
}

/** Writes the running node's access record (owner-only, through a fresh temporary file). */
export function writeAccessRecord(dir: string, record: AccessRecord): string {
  const file = join(ownerOnlyDir(dir), ACCESS_FILE);
  replaceFile(file, `${JSON.stringify(record)}\n`, 0o600);
  return file;
}

/** The access record in `dir`, or null when there is none (no node ran there, or it stopped cleanly). */
export function readAccessRecord(dir: string): AccessRecord | null {
  let text: string;
  try {
    text = readFileSync(join(dir, ACCESS_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const parsed = accessRecordSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${join(dir, ACCESS_FILE)} is not a console access record`);
  return parsed.data;
}

/** Removes the access record if it is still this process's (a newer node may have written its own). */
export function removeAccessRecord(dir: string, pid = process.pid): void {
  try {
    if (readAccessRecord(dir)?.pid === pid) rmSync(join(dir, ACCESS_FILE), { force: true });
  } catch {
    /* unreadable: left for the next start to replace */
  }
}

const html = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The link a one-time code makes: the node's page, which exchanges the code for the token and drops it. */
export const consoleLink = (url: string, code: string) =>
  `${url.replace(/\/+$/, '')}/?code=${encodeURIComponent(code)}`;

/**
 * Writes the page that sends a browser to `url` with `code` (owner-only, in an owner-only folder) and returns its
 * path: the browser is started on this path, which tells nobody anything.
 */
export function writeLinkPage(dir: string, url: string, code: string): string {
  const file = join(ownerOnlyDir(dir), LINK_PAGE);
  const link = html(consoleLink(url, code));
  replaceFile(
    file,
    `<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${link}">
<title>Opening the Routerdesk console</title></head>
<body><p>Opening the Routerdesk console… <a href="${link}">continue</a> (the link works once).</p></body></html>
`,
    0o600,
  );
  return file;
}
