export * from './db';
export * from './migrations';
export * from './analytics';
export * from './hash-cache';
export * from './cluster-store';
