import type { RuntimeBlobView as RuntimeBlob } from '../../../../src-router/contract';
import type { Donut as DonutView, Meter } from '../../runtime/runtime-format';
import { cpuCardView, type GaugeCardView, gpuCardView, memoryCardView } from '../../runtime/runtime-view';

const R = 26;
const CIRCUMFERENCE = 2 * Math.PI * R;

/** A percentage ring; the number in the middle is the reading. */
export function Donut({ donut, testId }: { donut: DonutView; testId: string }) {
  const filled = (donut.percent / 100) * CIRCUMFERENCE;
  return (
    <figure className="donut" data-testid={testId} data-reported={donut.reported}>
      <svg viewBox="0 0 64 64" width="64" height="64" aria-hidden="true">
        <circle className="donut-track" cx="32" cy="32" r={R} />
        <circle
          className="donut-fill"
          cx="32"
          cy="32"
          r={R}
          strokeDasharray={`${filled} ${CIRCUMFERENCE - filled}`}
          transform="rotate(-90 32 32)"
        />
      </svg>
      <span className="donut-label" data-testid={`${testId}-label`}>
        {donut.label}
      </span>
      <figcaption className="donut-sub" data-testid={`${testId}-sub`}>
        {donut.sub}
      </figcaption>
    </figure>
  );
}

function MeterRow({ label, meter, testId }: { label: string; meter: Meter; testId: string }) {
  return (
    <div className="meter-row" data-testid={testId} data-reported={meter.reported}>
      <span className="meter-label">{label}</span>
      <span
        className={`meter${meter.relative ? ' meter-relative' : ''}`}
        title={meter.relative ? 'relative bar: read the number' : undefined}
      >
        <span className="meter-fill" style={{ width: `${(meter.fill * 100).toFixed(1)}%` }} />
      </span>
      <span className="meter-value" data-testid={`${testId}-value`}>
        {meter.label}
      </span>
    </div>
  );
}

function GaugeCard({ view, id }: { view: GaugeCardView; id: string }) {
  return (
    <div className="card gauge-card" data-testid={`gauge-${id}`}>
      <div className="card-head">
        <h2>{view.title}</h2>
        {view.tags.map((t) => (
          <span key={t} className="tag" data-testid={`gauge-${id}-tag`}>
            {t}
          </span>
        ))}
      </div>
      <div className="gauge-name" data-testid={`gauge-${id}-name`} title={view.name}>
        {view.name}
        {view.detail && (
          <span className="muted" data-testid={`gauge-${id}-detail`}>
            {' '}
            · {view.detail}
          </span>
        )}
      </div>
      <div className="gauge-body">
        <Donut donut={view.donut} testId={`gauge-${id}-donut`} />
        <div className="meters">
          {view.rows.map((r) => (
            <MeterRow key={r.key} label={r.label} meter={r.meter} testId={`gauge-${id}-${r.key}`} />
          ))}
        </div>
      </div>
    </div>
  );
}

/** GPU, CPU and system memory (RT-4), straight from the blob. */
export function GaugeCards({ blob }: { blob: RuntimeBlob }) {
  return (
    <div className="gauge-grid">
      <GaugeCard id="gpu" view={gpuCardView(blob.gpu)} />
      <GaugeCard id="cpu" view={cpuCardView(blob.cpu)} />
      <GaugeCard id="memory" view={memoryCardView(blob.memory)} />
    </div>
  );
}
