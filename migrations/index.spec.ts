import { readdirSync } from 'node:fs';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { MIGRATIONS } from './index.js';

describe('MIGRATIONS', () => {
  it('lists every migration file of this folder, in timestamp order', () => {
    const files = readdirSync(new URL('.', import.meta.url))
      .filter((file) => /^\d+-\w+\.ts$/.test(file))
      .sort();
    expect(MIGRATIONS.map((migration) => new migration().name)).toEqual(
      files.map((file) => file.replace(/^(\d+)-(\w+)\.ts$/, '$2$1')),
    );
  });

  it('each say what reverting them drops, which migration:revert shows before it reverts', () => {
    const silent = MIGRATIONS.map((migration) => new migration()).filter((migration) => !migration.revertDrops.trim());
    expect(silent.map((migration) => `${migration.name}: fill in revertDrops`)).toEqual([]);
  });

  it('are part of the compiled code the service and the CLIs share, not looked up on disk at run time', () => {
    expect(dataSourceOptions('postgres://u@127.0.0.1/db').migrations).toEqual(MIGRATIONS);
  });
});
