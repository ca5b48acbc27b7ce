export * from './fit';
export * from './token-estimate';
