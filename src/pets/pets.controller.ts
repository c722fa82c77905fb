import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiHeader,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { ApiKeyIdentity } from '../auth/api-key-identity.js';
import { CurrentApiKey } from '../auth/current-api-key.decorator.js';
import { Deprecated } from '../http/deprecated.decorator.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IdempotencyKey,
} from '../idempotency/idempotency-key.decorator.js';
import { NewPet } from './dto/create-pet.dto.js';
import { ListPetsQuery } from './dto/list-pets.query.js';
import { Pet } from './dto/pet.dto.js';
import { PetIdPipe } from './pet-id.pipe.js';
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
  @ApiOperation({ operationId: 'listPets', summary: 'List all animals' })
  list(@Query() query: ListPetsQuery): Promise<Pet[]> {
    return this.pets.list(query);
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ operationId: 'createPet', summary: 'Add an animal' })
  @ApiHeader({
    name: IDEMPOTENCY_KEY_HEADER,
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[\\x20-\\x7e]+$' },
    description:
      'Makes the request safe to retry: a repeat with the same key and body within 24 hours returns the first ' +
      'response (with `Idempotent-Replayed: true`) and creates nothing. Keys are scoped to the API key.',
  })
  @ApiConflictResponse({ description: 'A request with the same Idempotency-Key is still in progress (`idempotency_key_in_use`).' })
  @ApiUnprocessableEntityResponse({
    description: 'The Idempotency-Key was already used with a different body (`idempotency_key_reused`).',
  })
  async create(
    @Body() newPet: NewPet,
    @IdempotencyKey() idempotencyKey: string | undefined,
    @CurrentApiKey() caller: ApiKeyIdentity,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Pet> {
    if (idempotencyKey === undefined) return this.pets.create(newPet);
    const outcome = await this.pets.createIdempotently(newPet, { apiKeyId: caller.id, key: idempotencyKey });
    reply.status(outcome.status);
    if (outcome.replayed) reply.header('Idempotent-Replayed', 'true');
    return outcome.body;
  }

  @Get(':petId')
  @Deprecated(GET_PET_DEPRECATION)
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
