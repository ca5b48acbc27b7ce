import type { RuntimeBlobView as RuntimeBlob } from '../../../../src-router/contract';
import { NOT_REPORTED } from '../../runtime/runtime-format';
import { bannerView } from '../../runtime/runtime-view';

/** Host banner (RT-3): host, version, uptime, engine, systems-nominal pill. No listener field. */
export function RuntimeBanner({ blob }: { blob: RuntimeBlob }) {
  const b = bannerView(blob);
  const facts: [string, string, string, string?][] = [
    ['Host', b.host, 'banner-host'],
    ['Version', b.version, 'banner-version'],
    ['Uptime', b.uptime, 'banner-uptime', 'process uptime as of the last publish'],
    ['Engine', b.engine, 'banner-engine'],
  ];
  return (
    <div className="card runtime-banner" data-testid="runtime-banner">
      <dl className="banner-facts">
        {facts.map(([label, value, testId, title]) => (
          <div key={testId} title={title}>
            <dt>{label}</dt>
            <dd data-testid={testId} className={value === NOT_REPORTED ? 'muted' : undefined}>
              {value}
            </dd>
          </div>
        ))}
      </dl>
      {b.nominal && (
        <span
          className={`pill pill-${b.nominal.tone}`}
          data-testid="banner-nominal"
          title="self-tests with status pass / all self-tests"
        >
          {b.nominal.label}
        </span>
      )}
    </div>
  );
}
