export * from './link-schema';
export * from './link-validate';
export * from './link-candidates';
export * from './link-store';
export * from './link-upgrade';
