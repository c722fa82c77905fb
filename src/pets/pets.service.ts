import { Injectable } from '@nestjs/common';
import { ApiError } from '../http/api-error.js';
import { ErrorCode } from '../http/error-code.js';
import { NewPet } from './dto/create-pet.dto.js';
import { ListPetsQuery } from './dto/list-pets.query.js';
import { Pet } from './dto/pet.dto.js';
import { toPet } from './pet.mapper.js';
import { PetStatus } from './pet-status.enum.js';
import { PetsRepository } from './pets.repository.js';

@Injectable()
export class PetsService {
  constructor(private readonly pets: PetsRepository) {}

  async list(query: ListPetsQuery): Promise<Pet[]> {
    const rows = await this.pets.findPage({ status: query.status, limit: query.limit });
    return rows.map(toPet);
  }

  async create(newPet: NewPet): Promise<Pet> {
    const row = await this.pets.insert({
      name: newPet.name,
      categoryId: newPet.categoryId,
      status: newPet.status ?? PetStatus.Available,
    });
    return toPet(row);
  }

  async get(id: number): Promise<Pet> {
    const row = await this.pets.findById(id);
    if (!row) throw new ApiError(404, ErrorCode.NotFound, `No animal has id ${id}.`);
    return toPet(row);
  }
}
