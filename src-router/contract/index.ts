export * from './console';
export * from './client-requests';
