export * from './app';
export * from './deps';
export * from './auth';
export * from './console-codes';
export * from './errors';
