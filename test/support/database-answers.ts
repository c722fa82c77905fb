import { expect } from '@jest/globals';
import type { Client } from 'pg';
import type { Pet } from '../../src/pets/dto/pet.dto.js';
import type { ApiResponse } from './test-app.js';

/** The 503 every database fault is answered with, and its Retry-After. */
export function expectUnavailable(response: ApiResponse): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status: 503,
    body: { code: 'service_unavailable', message: 'The service is temporarily unavailable; retry later.', status: 503 },
  });
  expect(response.headers.get('retry-after')).toBe('5');
}

/** Sends `total` requests made by `make(i)`, `concurrency` at a time; the answers in order. */
export async function burst<T>(total: number, concurrency: number, make: (index: number) => Promise<ApiResponse<T>>) {
  const answers: ApiResponse<T>[] = new Array<ApiResponse<T>>(total);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < total; index = next++) answers[index] = await make(index);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return answers;
}

export const countByStatus = (answers: ApiResponse[]) =>
  answers.reduce<Record<number, number>>(
    (counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }),
    {},
  );

/** Every create answered 201 is in the database, with the id it was answered with. */
export async function expectAcknowledgedStored(sql: Client, answers: ApiResponse<Pet>[], names: string[]) {
  const { rows } = await sql.query<{ id: string; name: string }>('SELECT id, name FROM pets WHERE name = ANY($1)', [
    names,
  ]);
  const stored = new Map(rows.map((row) => [row.name, Number(row.id)]));
  answers.forEach((answer, index) => {
    if (answer.status === 201) expect(stored.get(names[index])).toBe(answer.body.id);
  });
}

/** animal_store_database_faults_total by SQLSTATE class (or `pool`), from `origin`'s /metrics. */
export async function faultCounts(origin: string, headers: Record<string, string> = {}) {
  const text = await (await fetch(`${origin}/metrics`, { headers })).text();
  const series = text.matchAll(/^animal_store_database_faults_total\{sqlstate_class="(\w+)"\} (\d+)$/gm);
  return Object.fromEntries([...series].map(([, sqlClass, count]) => [sqlClass, Number(count)]));
}
