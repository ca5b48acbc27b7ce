export * from './types';
export * from './shapes';
export * from './adapters';
export * from './command-template';
export * from './features';
