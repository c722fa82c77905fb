import { ApiError } from '../edge/errors/api-error.js';
import { ErrorCode } from '../edge/errors/error-code.js';
import type { Database, Queryable } from '../database/database.js';
import type { Pet } from './dto/pet.dto.js';
import type { IdempotencyService } from './idempotency/idempotency.service.js';
import { PetStatus } from './pet-status.enum.js';
import { PageCursorCodec } from './page-cursor.codec.js';
import { NewPetRow, PetPage, PetPageQuery, PetsRepository } from './pets.repository.js';
import { PetsService } from './pets.service.js';

/** Only the three queries the service runs, answering with animals as the repository maps them. */
class FakePetsRepository {
  pageQueries: PetPageQuery[] = [];
  inserted: NewPetRow[] = [];
  managers: (Queryable | undefined)[] = [];
  pets: Pet[] = [];

  findPage(query: PetPageQuery): Promise<PetPage> {
    this.pageQueries.push(query);
    return Promise.resolve({ pets: this.pets, more: false });
  }

  findById(id: number): Promise<Pet | undefined> {
    return Promise.resolve(this.pets.find((pet) => pet.id === id));
  }

  insert(pet: NewPetRow, manager?: Queryable): Promise<Pet> {
    this.inserted.push(pet);
    this.managers.push(manager);
    return Promise.resolve({ id: 41, ...pet });
  }
}

/** The transaction's manager that the idempotency service hands to the work it runs. */
const transaction = {} as Queryable;
const idempotency = {
  run: async (_scope: unknown, _body: unknown, work: (manager: Queryable) => Promise<object>) => ({
    ...(await work(transaction)),
    replayed: false,
  }),
} as unknown as IdempotencyService;

describe('PetsService', () => {
  let repository: FakePetsRepository;
  let service: PetsService;

  beforeEach(() => {
    repository = new FakePetsRepository();
    service = new PetsService(
      repository as unknown as PetsRepository,
      new PageCursorCodec('a-cursor-secret-of-at-least-32-chars'),
      idempotency,
      { wrote: () => undefined } as unknown as Database,
    );
  });

  describe('create', () => {
    it('stores and returns the status "available" when none is given', async () => {
      const pet = await service.create({ name: 'Rex', categoryId: 3 });

      expect(repository.inserted).toEqual([{ name: 'Rex', categoryId: 3, status: PetStatus.Available }]);
      expect(pet).toEqual({ id: 41, name: 'Rex', categoryId: 3, status: 'available' });
    });

    it('keeps the status it is given', async () => {
      const pet = await service.create({ name: 'Tom', categoryId: 1, status: PetStatus.Sold });

      expect(repository.inserted).toEqual([{ name: 'Tom', categoryId: 1, status: PetStatus.Sold }]);
      expect(pet.status).toBe('sold');
    });

    it('inserts an idempotent create in the transaction that claims the key, answering 201', async () => {
      const outcome = await service.createIdempotently({ name: 'Rex', categoryId: 3 }, { lineage: '1', key: 'k' });

      expect(repository.managers).toEqual([transaction]);
      expect(outcome).toEqual({
        status: 201,
        body: { id: 41, name: 'Rex', categoryId: 3, status: 'available' },
        replayed: false,
      });
    });
  });

  describe('list', () => {
    it('passes the status filter and limit to the repository', async () => {
      await service.list({ limit: 7, status: PetStatus.Pending });

      expect(repository.pageQueries).toEqual([{ limit: 7, status: PetStatus.Pending, after: 0 }]);
    });

    it('returns an empty list when nothing matches', async () => {
      await expect(service.list({ limit: 20, status: PetStatus.Sold })).resolves.toEqual({ pets: [] });
    });
  });

  describe('get', () => {
    it('returns the animal with numeric ids', async () => {
      repository.pets = [{ id: 12, name: 'Rex', categoryId: 3, status: PetStatus.Pending }];

      await expect(service.get(12)).resolves.toEqual({ id: 12, name: 'Rex', categoryId: 3, status: 'pending' });
    });

    it('throws a 404 not_found ApiError for an unknown id', async () => {
      const error = await service.get(404).catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).toBody()).toEqual({
        code: ErrorCode.NotFound,
        message: 'No animal has id 404.',
        status: 404,
      });
    });
  });
});
