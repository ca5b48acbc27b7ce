import { statePillClass } from '../format';

export function StatePill({ state, testId }: { state: string; testId?: string }) {
  return (
    <span className={statePillClass(state)} data-testid={testId} data-state={state}>
      {state}
    </span>
  );
}
