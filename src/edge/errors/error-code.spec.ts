import { HttpException } from '@nestjs/common';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODE_BY_STATUS, ERROR_CODES } from './error-code.js';
import { ErrorCode } from './error-code.js';
import { toApiError } from './to-api-error.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** docs/contract.md's error table: each code with the one status it is sent with. */
function documentedStatuses(): Map<string, number> {
  const contract = readFileSync(join(ROOT, 'docs', 'contract.md'), 'utf8');
  const table = contract.slice(contract.indexOf('## Errors'));
  const rows = [...table.matchAll(/^\| `([a-z_]+)`\s*\| (\d{3})\s*\|/gm)];
  return new Map(rows.map(([, code, status]) => [code, Number(status)]));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Every `new ApiError(<status>, ErrorCode.<Name>, …)` the service's source builds, as `status code`. */
function errorsBuiltInSource(): string[] {
  const built = sourceFiles(join(ROOT, 'src')).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/new ApiError\(\s*(\d{3}),\s*ErrorCode\.(\w+)/g)].map(
      ([, status, name]) => `${status} ${ErrorCode[name as keyof typeof ErrorCode]}`,
    ),
  );
  return [...new Set(built)].sort();
}

describe('the documented error tables', () => {
  const documented = documentedStatuses();
  const documentedPairs = new Set([...documented].map(([code, status]) => `${status} ${code}`));

  it('list exactly the closed set of codes', () => {
    expect([...documented.keys()].sort()).toEqual([...ERROR_CODES].sort());
  });

  it('give each status its default code', () => {
    for (const [status, code] of Object.entries(CODE_BY_STATUS)) {
      expect([code, documented.get(code)]).toEqual([code, Number(status)]);
    }
  });

  it('hold every status and code the source builds an error with', () => {
    const built = errorsBuiltInSource();
    expect(built.length).toBeGreaterThan(10);
    expect(built.filter((pair) => !documentedPairs.has(pair))).toEqual([]);
  });

  it('hold whatever a framework error of any status is mapped to', () => {
    for (let status = 400; status <= 599; status += 1) {
      const error = toApiError(new HttpException('refused', status));
      const pair = `${error.getStatus()} ${error.code}`;
      expect([status, documentedPairs.has(pair)]).toEqual([status, true]);
    }
  });
});
