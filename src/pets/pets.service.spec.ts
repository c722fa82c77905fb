import type { IdempotencyService } from '../http/idempotency/idempotency.service.js';
import { ApiError } from '../http/errors/api-error.js';
import { ErrorCode } from '../http/errors/error-code.js';
import { PetRow } from './pet.mapper.js';
import { PetStatus } from './pet-status.enum.js';
import { PageCursorCodec } from './page-cursor.codec.js';
import { NewPetRow, PetPageQuery, PetRowPage, PetsRepository } from './pets.repository.js';
import { PetsService } from './pets.service.js';

/** Only the three queries the service runs, answering with rows shaped as node-postgres returns them. */
class FakePetsRepository {
  pageQueries: PetPageQuery[] = [];
  inserted: NewPetRow[] = [];
  rows: PetRow[] = [];

  findPage(query: PetPageQuery): Promise<PetRowPage> {
    this.pageQueries.push(query);
    return Promise.resolve({ rows: this.rows, more: false });
  }

  findById(id: number): Promise<PetRow | undefined> {
    return Promise.resolve(this.rows.find((row) => Number(row.id) === id));
  }

  insert(pet: NewPetRow): Promise<PetRow> {
    this.inserted.push(pet);
    return Promise.resolve({ id: '41', name: pet.name, category_id: String(pet.categoryId), status: pet.status });
  }
}

describe('PetsService', () => {
  let repository: FakePetsRepository;
  let service: PetsService;

  beforeEach(() => {
    repository = new FakePetsRepository();
    service = new PetsService(
      repository as unknown as PetsRepository,
      new PageCursorCodec('a-cursor-secret-of-at-least-32-chars'),
      {} as IdempotencyService,
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
  });

  describe('list', () => {
    it('passes the status filter and limit to the repository', async () => {
      await service.list({ limit: 7, status: PetStatus.Pending });

      expect(repository.pageQueries).toEqual([{ limit: 7, status: PetStatus.Pending, after: 0 }]);
    });

    it('maps int8 strings to numbers and exposes only the API fields, in the repository order', async () => {
      repository.rows = [
        { id: '9007199254740991', name: 'Max', category_id: '9007199254740991', status: PetStatus.Sold },
        { id: '2', name: 'Bo', category_id: '5', status: PetStatus.Available, created_at: new Date() } as PetRow,
      ];

      const { pets } = await service.list({ limit: 20 });

      expect(pets).toEqual([
        { id: 9007199254740991, name: 'Max', categoryId: 9007199254740991, status: 'sold' },
        { id: 2, name: 'Bo', categoryId: 5, status: 'available' },
      ]);
      expect(Object.keys(pets[1])).toEqual(['id', 'name', 'categoryId', 'status']);
    });

    it('returns an empty list when nothing matches', async () => {
      await expect(service.list({ limit: 20, status: PetStatus.Sold })).resolves.toEqual({ pets: [] });
    });
  });

  describe('get', () => {
    it('returns the animal with numeric ids', async () => {
      repository.rows = [{ id: '12', name: 'Rex', category_id: '3', status: PetStatus.Pending }];

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
