export * from './config-hash';
export * from './model-registry';
export * from './identity-merge';
export * from './cluster-catalog';
export * from './target';
export * from './servable';
export * from './model-config-diff';
