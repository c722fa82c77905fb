import { registerHooks } from 'node:module';

// Jest loads its global setup with Node's own resolver, not through the moduleNameMapper that lets test files import
// './x.js' from './x.ts'; the same mapping here, so that the setup starts the cluster with dev/'s launcher.
registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (!/^\.{1,2}\/.*\.js$/.test(specifier)) throw error;
      return nextResolve(specifier.replace(/\.js$/, '.ts'), context);
    }
  },
});

export default async function globalSetup(): Promise<void> {
  const { setUpDatabaseServer } = await import('../database-server.js');
  await setUpDatabaseServer();
}
