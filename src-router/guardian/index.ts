export * from './rules';
export * from './guardian-store';
export * from './guardian-wire';
