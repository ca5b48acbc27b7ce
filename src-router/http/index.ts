export * from './app';
export * from './auth';
export * from './console-codes';
export * from './deps';
export * from './errors';
