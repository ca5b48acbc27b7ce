/** Assets and split recipes (ASSET-1..4): file roots, asset transfer by verified hash, bindings, recipes. */
export * from './errors';
export * from './file-roots';
export * from './asset-index';
export * from './binding-store';
export * from './transfer';
export * from './recipes';
export * from './recipe-cluster';
export * from './asset-service';
