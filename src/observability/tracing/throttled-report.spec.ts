import { throttledReport } from './throttled-report.js';

describe('throttledReport', () => {
  it('writes the first report at once, then at most one per interval with the count of the ones held back', () => {
    let now = 1_000;
    const lines: string[] = [];
    const report = throttledReport(
      (line) => lines.push(line),
      60_000,
      () => now,
    );

    report('Trace export failed: ECONNREFUSED');
    for (let batch = 0; batch < 11; batch++) {
      now += 5_000;
      report('Trace export failed: ECONNREFUSED');
    }
    expect(lines).toEqual(['Trace export failed: ECONNREFUSED']);

    now += 5_000;
    report('Trace export failed: timeout');
    expect(lines).toEqual([
      'Trace export failed: ECONNREFUSED',
      'Trace export failed: timeout (11 more since the last report)',
    ]);
  });
});
