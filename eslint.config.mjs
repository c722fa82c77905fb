// @ts-check
import eslint from '@eslint/js';
import { defineConfig, globalIgnores, includeIgnoreFile } from 'eslint/config';
import eslintConfigPrettier from 'eslint-config-prettier/flat';
import globals from 'globals';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

// The scenarios import the client a spec generates into test/artifacts at run time, and are typechecked there.
const GENERATED_CLIENT_SCENARIOS = ['test/generated-client/**/*.ts', 'test/hey-api-client/**/*.ts'];

// The layers of src/, lowest first: a folder imports only from the folders before it (README, "Where things
// are"). The composition root (src/*.ts) and the commands (src/cli/) sit on top. The one exception is the
// migrations list, which the database layer loads from ../migrations.
const LAYERS = ['config', 'common', 'database', 'edge', 'auth', 'deprecation', 'openapi', 'observability', 'pets'];
const ABOVE_ALL = ['cli'];
const layering = LAYERS.map((folder, index) => {
  const higher = [...LAYERS.slice(index + 1), ...ABOVE_ALL, 'dev'];
  return {
    files: [`src/${folder}/**/*.ts`],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^\\.{1,2}/(?:\\.\\./)*(?:${higher.join('|')})/`,
              message: `src/${folder}/ is below ${higher.join(', ')}: move the shared piece down a layer, or inject it.`,
            },
          ],
        },
      ],
    },
  };
});

// dev/ (development tools, left out of the image) may import src/, never the reverse: 'dev' tops the layers
// above, and this covers the rest of src/.
const srcAboveDev = {
  files: ['src/*.ts', ...ABOVE_ALL.map((folder) => `src/${folder}/**/*.ts`)],
  ignores: ['**/*.spec.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: '^(?:\\.\\./)+dev/',
            message: 'src/ is built into the image without dev/: dev/ may import src/, never the reverse.',
          },
        ],
      },
    ],
  },
};

export default defineConfig(
  includeIgnoreFile(fileURLToPath(new URL('.gitignore', import.meta.url)), '.gitignore'),
  globalIgnores(['eslint.config.mjs', '*.config.js']),
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  // Formatting is Prettier's alone (`npm run format:check`): this turns off the rules that would disagree with it.
  eslintConfigPrettier,
  {
    languageOptions: {
      globals: { ...globals.node, ...globals.jest },
      sourceType: 'module',
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-floating-promises': 'warn',
      '@typescript-eslint/no-unsafe-argument': 'warn',
      // `const { id: _id, ...rest } = value` is how a property is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  srcAboveDev,
  ...layering,
  // Node loads these itself in Jest's global setup, stripping types without knowing which imports are types only
  // (docs/testing.md): each must say so.
  {
    files: ['dev/**/*.ts', 'test/support/database-server.ts', 'src/database/session-timeouts.ts'],
    rules: { '@typescript-eslint/consistent-type-imports': 'error' },
  },
  { files: GENERATED_CLIENT_SCENARIOS, extends: [tseslint.configs.disableTypeChecked] },
);
