export * from './cluster-catalog';
export * from './config-hash';
export * from './identity-merge';
export * from './model-config-diff';
export * from './model-registry';
export * from './servable';
export * from './target';
