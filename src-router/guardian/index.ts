export * from './guardian-store';
export * from './guardian-wire';
export * from './rules';
