import { docker, DOCKER, IMAGE, run } from './support/docker.js';

/** What the service image holds: the compiled service and its production dependencies, nothing else. */
const inImage = (script: string, ...args: string[]) =>
  run(DOCKER, ['run', '--rm', '--entrypoint', 'sh', IMAGE, '-c', script, 'sh', ...args]);

describe('the service image', () => {
  it('prints its size and layers (docs/operating.md, "The image")', async () => {
    const [image] = JSON.parse(await docker(['image', 'inspect', IMAGE])) as [
      { Size: number; RootFS: { Layers: string[] } },
    ];
    const base = process.env.NODE_IMAGE!;
    const [baseImage] = JSON.parse(await docker(['image', 'inspect', base])) as [typeof image];
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
    process.stdout.write(
      `${IMAGE}: ${mb(image.Size)}, ${image.RootFS.Layers.length} layers; on top of ${base} ` +
        `(${mb(baseImage.Size)}, ${baseImage.RootFS.Layers.length} layers): ${mb(image.Size - baseImage.Size)}, ` +
        `${image.RootFS.Layers.length - baseImage.RootFS.Layers.length} layers\n`,
    );
    // WORKDIR, package.json and lock, node_modules, dist: four layers on the base.
    expect(image.RootFS.Layers.length - baseImage.RootFS.Layers.length).toBe(4);
  });

  it('holds the compiled service and the production dependencies only: no dev dependency, test, bench, source or map', async () => {
    // Dev-only packages by the lock file (a package both sides need, such as ajv, is a production one).
    const devOnly = `const lock = require('/app/package-lock.json');
      for (const [path, entry] of Object.entries(lock.packages))
        if (path && (entry.dev || entry.devOptional) && require('node:fs').existsSync('/app/' + path)) console.log(path);`;
    const listing = await inImage(
      `ls -A /app; echo ---; find /app -name '*.map'; find /app/dist -name '*.tsbuildinfo*' -o -name '*.spec.js'; ` +
        'echo ---; node -e "$1"',
      devOnly,
    );
    expect(listing.code).toBe(0);
    const [top, maps, dev] = listing.stdout.split('---\n').map((part) => part.split('\n').filter(Boolean));
    expect(top.sort()).toEqual(['dist', 'node_modules', 'package-lock.json', 'package.json']);
    expect(maps).toEqual([]);
    expect(dev).toEqual([]);
  });

  it('has a clean production tree: `npm ls --omit=dev` inside it finds nothing missing, extraneous or invalid', async () => {
    const ls = await inImage('npm ls --omit=dev --all');
    expect(ls.code).toBe(0);
    expect(ls.stdout + ls.stderr).not.toMatch(/extraneous|missing|invalid|ERR!/i);
  });
});
