export interface SoakOptions {
  durationSeconds: number;
  connections: number;
}

const USAGE = 'usage: npm run soak [-- --duration <1..3600 s, default 60>] [--connections <1..4096, default 64>]';

function bounded(name: string, raw: string | undefined, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw ?? '') || value < min || value > max)
    throw new Error(`--${name} must be from ${min} to ${max}\n${USAGE}`);
  return value;
}

export function parseSoakOptions(argv: string[]): SoakOptions {
  const options: SoakOptions = { durationSeconds: 60, connections: 64 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--duration') options.durationSeconds = bounded('duration', value, 1, 3600);
    else if (flag === '--connections') options.connections = bounded('connections', value, 1, 4096);
    else throw new Error(`unknown argument ${flag}\n${USAGE}`);
  }
  return options;
}
