export * from './duration';
export * from './json-schema';
export * from './load';
export * from './model-config';
export * from './node-config';
export * from './role-checks';
export * from './write-gates';
