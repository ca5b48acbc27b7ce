export * from './duration';
export * from './node-config';
export * from './model-config';
export * from './load';
export * from './json-schema';
export * from './role-checks';
export * from './write-gates';
