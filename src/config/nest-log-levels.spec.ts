import { nestLogLevels } from './nest-log-levels.js';

describe('nestLogLevels', () => {
  it.each([
    ['fatal', ['fatal']],
    ['error', ['fatal', 'error']],
    ['warn', ['fatal', 'error', 'warn']],
    ['info', ['fatal', 'error', 'warn', 'log']],
    ['debug', ['fatal', 'error', 'warn', 'log', 'debug']],
    ['trace', ['fatal', 'error', 'warn', 'log', 'debug', 'verbose']],
  ] as const)('LOG_LEVEL=%s enables %j', (level, expected) => {
    expect(nestLogLevels(level)).toEqual(expected);
  });
});
