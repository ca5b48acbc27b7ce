export * from './console';
export * from './client-requests';
export * from './node';
export * from './errors';
export * from './links';
export * from './assets';
export * from './runtime';
export * from './multi-spec';
