import Sequencer from '@jest/test-sequencer';
import { basename } from 'node:path';

/**
 * The system suite's order (jest.system.config.js, `systemSpecs.first`), the rest after them in Jest's own order:
 * each worker takes the next spec as it frees (test/system/support/scheduling.ts).
 */
export default class SystemSequencer extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const { first } = test.context.config.globals.systemSpecs;
      const index = first.indexOf(basename(test.path));
      return index === -1 ? first.length : index;
    };
    return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
  }
}
