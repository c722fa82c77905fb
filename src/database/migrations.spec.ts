import { readdirSync } from 'node:fs';
import { dataSourceOptions } from './data-source-options.js';
import { MIGRATIONS } from './migrations.js';

describe('MIGRATIONS', () => {
  it('lists every file of src/database/migrations, in timestamp order', () => {
    const files = readdirSync(new URL('./migrations', import.meta.url))
      .filter((file) => file.endsWith('.ts'))
      .sort();
    const timestamp = (file: string) => file.split('-')[0];
    expect(MIGRATIONS.map((migration) => new migration().name)).toEqual(
      files.map((file) => `${file.replace(/^\d+-/, '').replace(/\.ts$/, '')}${timestamp(file)}`),
    );
  });

  it('are part of the compiled code the service and the CLIs share, not looked up on disk at run time', () => {
    expect(dataSourceOptions('postgres://u@127.0.0.1/db').migrations).toEqual(MIGRATIONS);
  });
});
