import { createServer, type RequestListener } from 'node:http';
import { startNode, type TestNode } from './node-harness';

/**
 * A real loopback HTTP server as the upstream of a node's static route `up` (routing.static_routes), and the node in
 * front of it. `close` stops both.
 */
export async function nodeWithStaticUpstream(
  handler: RequestListener,
): Promise<{ node: TestNode; close(): Promise<void> }> {
  const upstream = createServer(handler);
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = (upstream.address() as { port: number }).port;
  try {
    const node = await startNode({
      models: {},
      config: { routing: { static_routes: { up: { endpoints: [`http://127.0.0.1:${port}`] } } } },
    });
    return {
      node,
      close: async () => {
        await node.stop();
        upstream.closeAllConnections();
        await new Promise<void>((resolve) => upstream.close(() => resolve()));
      },
    };
  } catch (err) {
    upstream.close();
    throw err;
  }
}
