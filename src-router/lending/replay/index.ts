export * from './sim-clock';
export * from './types';
export * from './summary';
export * from './recorded';
export * from './idle';
export * from './settings';
export * from './simulate';
export * from './replay';
