export * from './idle';
export * from './recorded';
export * from './replay';
export * from './settings';
export * from './sim-clock';
export * from './simulate';
export * from './summary';
export * from './types';
