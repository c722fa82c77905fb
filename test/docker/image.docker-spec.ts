import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { docker, IMAGE, ROOT, run, DOCKER } from './support/docker.js';

/** What the service image holds: the compiled service and its production dependencies, nothing else. */
const inImage = (script: string) => run(DOCKER, ['run', '--rm', '--entrypoint', 'sh', IMAGE, '-c', script]);

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
    // package.json and lock, node_modules, dist: three layers on the base.
    expect(image.RootFS.Layers.length - baseImage.RootFS.Layers.length).toBe(3);
  });

  it('holds the compiled service and the production dependencies only: no dev dependency, test, bench, source or map', async () => {
    const { devDependencies } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    const listing = await inImage(
      `ls -A /app; echo ---; find /app -name '*.map' -o -name '*.tsbuildinfo*' -o -name '*.spec.js' | head; echo ---; ` +
        `for p in ${Object.keys(devDependencies).join(' ')}; do [ -e "/app/node_modules/$p" ] && echo "$p"; done; true`,
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
