export * from './errors';
export * from './executor';
export * from './engine-call';
export * from './id-rewrite';
export * from './work-measure';
export * from './capabilities';
export * from './router-metrics';
export * from './ollama-translate';
