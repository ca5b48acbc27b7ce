export * from './engine-env';
export * from './engine-process';
export * from './errors';
export * from './free-port';
export * from './lane-restorer';
export * from './lane-runtime';
export * from './log-ring';
export * from './supervisor';
