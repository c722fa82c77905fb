import Sequencer from '@jest/test-sequencer';
import { basename } from 'node:path';

/**
 * The system suite's order (jest.system.config.js, `systemSpecs`): the specs that run alone first, then the one
 * that runs beside the rest, then the rest, so that the second worker has something to run beside it
 * (test/system/support/one-at-a-time.ts).
 */
export default class SystemSequencer extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const { alone, beside } = test.context.config.globals.systemSpecs;
      const name = basename(test.path);
      return alone.includes(name) ? 0 : beside.includes(name) ? 1 : 2;
    };
    return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
  }
}
