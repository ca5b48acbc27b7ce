export * from './model-queue';
export * from './queue-eta';
