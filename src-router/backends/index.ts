export * from './errors';
export * from './engine-env';
export * from './engine-process';
export * from './lane-runtime';
export * from './supervisor';
export * from './free-port';
export * from './log-ring';
export * from './lane-restorer';
