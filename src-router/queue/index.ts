export * from './model-queue';
