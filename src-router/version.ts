import pkg from '../package.json';

/** The router version stamped on everything it writes. */
export const ROUTER_VERSION: string = pkg.version;
