export * from './link-candidates';
export * from './link-schema';
export * from './link-store';
export * from './link-upgrade';
export * from './link-validate';
