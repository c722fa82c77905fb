import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { RouteSchema } from '@nestjs/platform-fastify';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Deprecated } from '../http/deprecated.decorator.js';
import { NewPet } from './dto/create-pet.dto.js';
import { ListPetsQuery } from './dto/list-pets.query.js';
import { Pet } from './dto/pet.dto.js';
import { PetIdPipe } from './pet-id.pipe.js';
import { PET_LIST_RESPONSE_SCHEMA, PET_RESPONSE_SCHEMA } from './pet-response.schema.js';
import { PetsService } from './pets.service.js';

export const GET_PET_DEPRECATION = {
  since: new Date('2026-11-20T00:00:00Z'),
  sunset: new Date('2030-12-05T00:00:00Z'),
  successor: '/v1/pets',
};

@ApiTags('animals')
@ApiBearerAuth()
@Controller('pets')
export class PetsController {
  constructor(private readonly pets: PetsService) {}

  @Get()
  @RouteSchema({ response: { 200: PET_LIST_RESPONSE_SCHEMA } })
  @ApiOperation({ operationId: 'listPets', summary: 'List all animals' })
  list(@Query() query: ListPetsQuery): Promise<Pet[]> {
    return this.pets.list(query);
  }

  @Post()
  @HttpCode(201)
  @RouteSchema({ response: { 201: PET_RESPONSE_SCHEMA } })
  @ApiOperation({ operationId: 'createPet', summary: 'Add an animal' })
  create(@Body() newPet: NewPet): Promise<Pet> {
    return this.pets.create(newPet);
  }

  @Get(':petId')
  @Deprecated(GET_PET_DEPRECATION)
  @RouteSchema({ response: { 200: PET_RESPONSE_SCHEMA } })
  @ApiOperation({
    operationId: 'getPet',
    summary: 'Get an animal',
    deprecated: true,
    description:
      'Deprecated: announced for removal on 5 December 2030. Use `GET /pets` with the `status` filter instead.',
  })
  get(@Param('petId', PetIdPipe) petId: number): Promise<Pet> {
    return this.pets.get(petId);
  }
}
