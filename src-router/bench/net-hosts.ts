/**
 * Network hosts for runs that cross a network: each host is a Linux network namespace with its own address on one
 * bridge (iproute2, as root), so nodes talk over real TCP between addresses, and a link between two hosts can be cut
 * without a reset (blackhole routes both ways) and mended. The machine running the test or bench is on the bridge
 * too (address .1). Addresses come from 198.18.0.0/15, the range set aside for benchmarking networks; every address
 * used belongs to a namespace this run made, and `destroy()` removes them all.
 */
import { type ChildProcess, execFile, type SpawnOptions, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureDebianTool, findOnPath } from '../debian-tool';

const run = promisify(execFile);

/** The command that fails with what is missing when this machine cannot make network namespaces. */
export async function netnsSupport(): Promise<string | null> {
  if (process.platform !== 'linux') return 'network hosts need Linux network namespaces';
  if (process.getuid?.() !== 0) return 'network hosts need root (ip netns add): run as root';
  // Installed from Debian's packages when missing (as root), else the command to run.
  for (const [tool, pkg] of [
    ['ip', 'iproute2'],
    ['nsenter', 'util-linux'],
    ['tc', 'iproute2'],
  ]) {
    try {
      ensureDebianTool(tool, pkg, () => findOnPath(tool));
    } catch (err) {
      return `network hosts need ${tool}: ${(err as Error).message}`;
    }
  }
  return null;
}

export class NetHosts {
  private readonly addresses = new Map<string, string>();
  private readonly cuts = new Set<string>();

  private constructor(
    /** Which /24 of 198.18.0.0/16 this run took, so parallel runs do not meet. */
    private readonly net: number,
    private readonly hosts: readonly string[],
  ) {
    hosts.forEach((h, i) => this.addresses.set(h, `198.18.${net}.${i + 2}`));
  }

  /** Makes one namespace per host on a new bridge; throws with what is missing when it cannot. */
  static async create(hosts: readonly string[]): Promise<NetHosts> {
    const missing = await netnsSupport();
    if (missing) throw new Error(missing);
    const { stdout } = await run('ip', ['-o', 'link', 'show']);
    const taken = new Set([...stdout.matchAll(/\brdb(\d+)\b/g)].map((m) => Number(m[1])));
    const free = Array.from({ length: 250 }, (_, i) => i + 1).filter((n) => !taken.has(n));
    const net = free[(process.pid + Date.now()) % free.length];
    const lab = new NetHosts(net, hosts);
    try {
      await lab.build();
    } catch (err) {
      await lab.destroy();
      throw err;
    }
    return lab;
  }

  private ns(host: string): string {
    return `rd${this.net}-${host}`;
  }

  private async build(): Promise<void> {
    const bridge = `rdb${this.net}`;
    await ip('link', 'add', bridge, 'type', 'bridge');
    await ip('addr', 'add', `198.18.${this.net}.1/24`, 'dev', bridge);
    await ip('link', 'set', bridge, 'up');
    for (const [i, host] of this.hosts.entries()) {
      const ns = this.ns(host);
      const outer = `rdv${this.net}x${i}`;
      const inner = `rdi${this.net}x${i}`;
      await ip('netns', 'add', ns);
      await ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
      await ip('link', 'set', inner, 'netns', ns);
      await ip('link', 'set', outer, 'master', bridge);
      await ip('link', 'set', outer, 'up');
      await ip('-n', ns, 'addr', 'add', `${this.address(host)}/24`, 'dev', inner);
      await ip('-n', ns, 'link', 'set', inner, 'up');
      await ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
  }

  /** The host's address on the bridge. */
  address(host: string): string {
    const a = this.addresses.get(host);
    if (!a) throw new Error(`no network host '${host}'`);
    return a;
  }

  /**
   * Starts `command` inside the host's namespace (its own network stack; files and processes are shared). nsenter
   * execs the command itself, so the child is the command: a signal to it reaches the command, not a wrapper.
   */
  spawn(host: string, command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    return spawn('nsenter', [`--net=/run/netns/${this.ns(host)}`, '--', command, ...args], options);
  }

  /** Runs `command` inside the host's namespace to its end; resolves with its standard output. */
  async exec(host: string, command: string, args: readonly string[]): Promise<string> {
    return (await run('ip', ['netns', 'exec', this.ns(host), command, ...args], { timeout: 10_000 })).stdout;
  }

  /** Drops every packet between two hosts, both ways, without a reset: each side's route to the other is a blackhole. */
  async cut(a: string, b: string): Promise<void> {
    await ip('-n', this.ns(a), 'route', 'add', 'blackhole', `${this.address(b)}/32`);
    await ip('-n', this.ns(b), 'route', 'add', 'blackhole', `${this.address(a)}/32`);
    this.cuts.add(`${a}\n${b}`);
  }

  /** Undoes `cut`. */
  async mend(a: string, b: string): Promise<void> {
    await ip('-n', this.ns(a), 'route', 'del', 'blackhole', `${this.address(b)}/32`).catch(() => {});
    await ip('-n', this.ns(b), 'route', 'del', 'blackhole', `${this.address(a)}/32`).catch(() => {});
    this.cuts.delete(`${a}\n${b}`);
  }

  /**
   * Limits the host's link to `rate` (tc's units, `1mbit`) both ways: a token bucket on the bridge side of its veth
   * pair (traffic to it) and on its own side (traffic from it).
   */
  async limit(host: string, rate: string): Promise<void> {
    const i = this.hosts.indexOf(host);
    const tbf = ['root', 'tbf', 'rate', rate, 'burst', '32kbit', 'latency', '400ms'];
    await tc('qdisc', 'replace', 'dev', `rdv${this.net}x${i}`, ...tbf);
    await tc('-n', this.ns(host), 'qdisc', 'replace', 'dev', `rdi${this.net}x${i}`, ...tbf);
  }

  /** Undoes `limit`. */
  async unlimit(host: string): Promise<void> {
    const i = this.hosts.indexOf(host);
    await tc('qdisc', 'del', 'dev', `rdv${this.net}x${i}`, 'root').catch(() => {});
    await tc('-n', this.ns(host), 'qdisc', 'del', 'dev', `rdi${this.net}x${i}`, 'root').catch(() => {});
  }

  /** Ends every process left in a namespace, then removes the namespaces and the bridge (their interfaces go with them). */
  async destroy(): Promise<void> {
    for (const host of this.hosts) {
      const pids = await run('ip', ['netns', 'pids', this.ns(host)]).then(
        (r) => r.stdout.split(/\s+/).filter(Boolean).map(Number),
        () => [] as number[],
      );
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      await ip('netns', 'del', this.ns(host)).catch(() => {});
    }
    await ip('link', 'del', `rdb${this.net}`).catch(() => {});
  }
}

async function tc(...args: string[]): Promise<void> {
  try {
    await run('tc', args, { timeout: 10_000 });
  } catch (err) {
    throw new Error(`tc ${args.join(' ')}: ${((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`);
  }
}

async function ip(...args: string[]): Promise<void> {
  try {
    await run('ip', args, { timeout: 10_000 });
  } catch (err) {
    throw new Error(`ip ${args.join(' ')}: ${((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}`);
  }
}
