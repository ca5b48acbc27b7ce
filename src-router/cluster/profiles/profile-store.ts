/**
 * Connection profiles of remote clusters (UI-5) in the router's SQLite store (table `cluster_profiles`, migration 10).
 * The token is sealed on the way in and unsealed only to call the remote; nothing here ever returns it to a caller
 * other than the proxy.
 */
import { randomUUID } from 'node:crypto';
import { RouterError } from '../../contract';
import type { Db } from '../../store';
import { plainSealer, type TokenSealer, type TokenSealing } from './token-sealing';

export interface StoredProfile {
  id: string;
  name: string;
  url: string;
  sealing: TokenSealing;
  createdAt: number;
  updatedAt: number;
}

interface ProfileRow {
  id: string;
  name: string;
  url: string;
  token: string;
  token_sealing: TokenSealing;
  created_at: number;
  updated_at: number;
}

const fromRow = (r: ProfileRow): StoredProfile => ({
  id: r.id,
  name: r.name,
  url: r.url,
  sealing: r.token_sealing,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const isUniqueViolation = (e: unknown) =>
  e instanceof Error && 'code' in e && (e as { code: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';
const duplicateName = (name: string) =>
  new RouterError(
    409,
    'duplicate_cluster_name',
    `a cluster named '${name}' already exists`,
    'invalid_request_error',
    'name',
  );

/** Profiles as stored; the local cluster is not one (its id `local` is reserved). */
export class ProfileStore {
  constructor(
    private readonly db: Db,
    private readonly sealer: TokenSealer = plainSealer,
    private readonly clock: () => number = Date.now,
  ) {}

  list(): StoredProfile[] {
    return (this.db.prepare('SELECT * FROM cluster_profiles ORDER BY name').all() as ProfileRow[]).map(fromRow);
  }

  get(id: string): StoredProfile | undefined {
    const row = this.db.prepare('SELECT * FROM cluster_profiles WHERE id = ?').get(id) as ProfileRow | undefined;
    return row && fromRow(row);
  }

  /** The token to call the remote with; a 502 that says why when it cannot be unsealed here. */
  token(id: string): string {
    const row = this.db.prepare('SELECT * FROM cluster_profiles WHERE id = ?').get(id) as ProfileRow | undefined;
    if (!row) throw new RouterError(404, 'cluster_not_found', `no cluster '${id}'`);
    if (row.token_sealing !== this.sealer.kind && row.token_sealing !== 'plain') {
      throw new RouterError(
        502,
        'cluster_token_sealed',
        `the token of cluster '${row.name}' was sealed by the desktop app's keychain and cannot be read here: enter it again`,
      );
    }
    try {
      return row.token_sealing === 'plain' ? row.token : this.sealer.unseal(row.token);
    } catch {
      throw new RouterError(
        502,
        'cluster_token_sealed',
        `the token of cluster '${row.name}' cannot be unsealed: enter it again`,
      );
    }
  }

  create(p: { name: string; url: string; token: string }): StoredProfile {
    const now = this.clock();
    const row: ProfileRow = {
      id: randomUUID(),
      name: p.name,
      url: p.url,
      token: this.sealer.seal(p.token),
      token_sealing: this.sealer.kind,
      created_at: now,
      updated_at: now,
    };
    try {
      this.db
        .prepare(
          'INSERT INTO cluster_profiles (id, name, url, token, token_sealing, created_at, updated_at) VALUES (@id, @name, @url, @token, @token_sealing, @created_at, @updated_at)',
        )
        .run(row);
    } catch (e) {
      if (isUniqueViolation(e)) throw duplicateName(p.name);
      throw e;
    }
    return fromRow(row);
  }

  update(id: string, p: { name?: string; url?: string; token?: string }): StoredProfile | undefined {
    const current = this.db.prepare('SELECT * FROM cluster_profiles WHERE id = ?').get(id) as ProfileRow | undefined;
    if (!current) return undefined;
    const next: ProfileRow = {
      ...current,
      name: p.name ?? current.name,
      url: p.url ?? current.url,
      ...(p.token !== undefined ? { token: this.sealer.seal(p.token), token_sealing: this.sealer.kind } : {}),
      updated_at: this.clock(),
    };
    try {
      this.db
        .prepare(
          'UPDATE cluster_profiles SET name = @name, url = @url, token = @token, token_sealing = @token_sealing, updated_at = @updated_at WHERE id = @id',
        )
        .run(next);
    } catch (e) {
      if (isUniqueViolation(e)) throw duplicateName(next.name);
      throw e;
    }
    return fromRow(next);
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM cluster_profiles WHERE id = ?').run(id).changes > 0;
  }
}
