/** The IPC channel on which the preload asks the main process for the node's URL and console token. */
export const CONNECTION_CHANNEL = 'routerdesk:connection';

/** The IPC channel on which the preload asks the main process for a model file chosen in the native file dialog. */
export const PICK_MODEL_FILE_CHANNEL = 'routerdesk:pick-model-file';
