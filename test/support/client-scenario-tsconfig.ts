/**
 * How the generated-client specs compile their scenario beside the generated client: as a client developer's
 * project would, NodeNext modules with fetch's DOM types and nothing from this repository.
 */
export function clientScenarioTsconfig(files: string[]): object {
  return {
    compilerOptions: {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'ES2023',
      lib: ['ES2024', 'DOM'],
      types: [],
      strict: true,
      skipLibCheck: true,
      rootDir: '.',
      outDir: 'out',
    },
    files,
  };
}
