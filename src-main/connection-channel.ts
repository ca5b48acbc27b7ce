/** The IPC channel on which the preload asks the main process for the node's URL and console token. */
export const CONNECTION_CHANNEL = 'routerdesk:connection';
