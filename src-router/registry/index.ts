export * from './config-hash';
export * from './model-registry';
