export * from './adapters';
export * from './command-template';
export * from './features';
export * from './shapes';
export * from './types';
