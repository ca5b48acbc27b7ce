import type { ReactNode } from 'react';

export function Notice({ kind, testId, children }: { kind: 'info' | 'error'; testId: string; children: ReactNode }) {
  return (
    <p className={`notice notice-${kind}`} data-testid={testId} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </p>
  );
}
