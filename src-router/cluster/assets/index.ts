/** Assets and split recipes (ASSET-1..4): file roots, asset transfer by verified hash, bindings, recipes. */

export * from './asset-index';
export * from './asset-service';
export * from './binding-store';
export * from './errors';
export * from './file-roots';
export * from './recipe-cluster';
export * from './recipes';
export * from './transfer';
