import { RouterError } from '../../contract';

/** Stable codes of the asset module; each has one HTTP status (the HTTP layer shows `RouterError`s as they are). */
export const ASSET_ERROR_STATUS = {
  invalid_path: 400,
  invalid_hash: 400,
  invalid_recipe: 400,
  path_outside_root: 403,
  /** Inside the models config folder, the store or the node config's folder. */
  protected_folder: 403,
  source_not_configured: 403,
  unknown_root: 404,
  not_found: 404,
  recipe_not_found: 404,
  recipe_component_missing: 400,
  recipe_component_unavailable: 503,
  destination_exists: 409,
  asset_too_large: 413,
  range_not_satisfiable: 416,
  hash_mismatch: 502,
  size_mismatch: 502,
  transfer_refused: 502,
  transfer_failed: 502,
  transfer_timeout: 504,
  io_error: 500,
} as const;

export type AssetErrorCode = keyof typeof ASSET_ERROR_STATUS;

/** An asset, path or recipe operation that was refused or failed; `code` is stable, `status` is its HTTP status. */
export class AssetError extends RouterError {
  declare readonly code: AssetErrorCode;
  constructor(code: AssetErrorCode, message: string, param: string | null = null) {
    const status = ASSET_ERROR_STATUS[code];
    super(status, code, message, status >= 500 ? 'server_error' : 'invalid_request_error', param);
    this.name = 'AssetError';
  }
}

export const isAssetError = (err: unknown, code?: AssetErrorCode): err is AssetError =>
  err instanceof AssetError && (code === undefined || err.code === code);

/** A lowercase hex sha256, or an `invalid_hash` error. */
export function normalizeSha256(value: string, param = 'sha256'): string {
  const v = value.trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(v))
    throw new AssetError('invalid_hash', `${param} must be 64 hex digits (a sha256)`, param);
  return v;
}
