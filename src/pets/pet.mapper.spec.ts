import { PetRow, toPet } from './pet.mapper.js';
import { PetStatus } from './pet-status.enum.js';

describe('toPet', () => {
  it('maps int8 strings to numbers and exposes only the API fields', () => {
    const rows = [
      { id: '9007199254740991', name: 'Max', categoryId: '9007199254740991', status: PetStatus.Sold },
      { id: '2', name: 'Bo', categoryId: '5', status: PetStatus.Available, createdAt: new Date() } as PetRow,
    ];

    const pets = rows.map(toPet);

    expect(pets).toEqual([
      { id: 9007199254740991, name: 'Max', categoryId: 9007199254740991, status: 'sold' },
      { id: 2, name: 'Bo', categoryId: 5, status: 'available' },
    ]);
    expect(Object.keys(pets[1])).toEqual(['id', 'name', 'categoryId', 'status']);
  });
});
