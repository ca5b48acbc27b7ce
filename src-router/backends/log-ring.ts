/** The last `capacity` lines an engine printed (stdout and stderr), for the console and for error messages. */
export class LogRing {
  private readonly lines: { at: number; stream: 'stdout' | 'stderr'; text: string }[] = [];
  private partial: Record<'stdout' | 'stderr', string> = { stdout: '', stderr: '' };

  constructor(private readonly capacity = 500) {}

  write(stream: 'stdout' | 'stderr', chunk: string): void {
    const text = this.partial[stream] + chunk;
    const parts = text.split(/\r?\n/);
    this.partial[stream] = parts.pop() ?? '';
    for (const line of parts) this.push(stream, line);
  }

  private push(stream: 'stdout' | 'stderr', text: string) {
    this.lines.push({ at: Date.now(), stream, text: text.length > 2000 ? `${text.slice(0, 2000)}…` : text });
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
  }

  flush(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.partial[stream]) this.push(stream, this.partial[stream]);
      this.partial[stream] = '';
    }
  }

  tail(n = 50) {
    return this.lines.slice(-n);
  }

  /** The last non-empty stderr line (else stdout), to explain a failure. */
  lastLine(): string | undefined {
    this.flush();
    for (const stream of ['stderr', 'stdout'] as const) {
      for (let i = this.lines.length - 1; i >= 0; i--)
        if (this.lines[i].stream === stream && this.lines[i].text.trim()) return this.lines[i].text.trim();
    }
    return undefined;
  }
}
