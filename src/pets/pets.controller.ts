import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { RouteSchema } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import type { ApiKeyIdentity } from '../auth/api-key-identity.js';
import { CurrentApiKey } from '../auth/current-api-key.decorator.js';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator.js';
import { deprecationHeaderDocs } from '../openapi/deprecation-headers.js';
import { Deprecated } from '../http/deprecated.decorator.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IdempotencyKey,
} from '../http/idempotency/idempotency-key.decorator.js';
import { NewPet } from './dto/create-pet.dto.js';
import { ListPetsQuery } from './dto/list-pets.query.js';
import { Pet } from './dto/pet.dto.js';
import { nextPageLink } from './next-page-link.js';
import { MAX_ID, MIN_ID } from './pet-id.js';
import { PetIdPipe } from './pet-id.pipe.js';
import { PET_LIST_RESPONSE_SCHEMA, PET_RESPONSE_SCHEMA } from './pet-response.schema.js';
import { PetsService } from './pets.service.js';

export const GET_PET_DEPRECATION = {
  since: new Date('2026-11-20T00:00:00Z'),
  sunset: new Date('2030-12-05T00:00:00Z'),
  successor: '/v1/pets',
};

@ApiTags('animals')
@Controller('pets')
export class PetsController {
  constructor(private readonly pets: PetsService) {}

  @Get()
  @RouteSchema({ response: { 200: PET_LIST_RESPONSE_SCHEMA } })
  @ApiOperation({
    operationId: 'listPets',
    summary: 'List all animals',
    description:
      'Returns a page of animals ordered by id ascending, at most `limit` of them, optionally only those with the ' +
      'given `status`. When more match, the `Link` header points at the next page.',
  })
  @ApiOkResponse({
    description: 'The page of animals, ordered by id ascending.',
    type: Pet,
    isArray: true,
    headers: {
      Link: {
        description:
          'Present only when more animals match: `<…/v1/pets?limit=N&status=S&cursor=C>; rel="next"` (RFC 8288), ' +
          'the same query parameters plus the cursor of the next page. The target is relative to the request URL. ' +
          'Absent on the last page.',
        schema: {
          type: 'string',
          example: '</v1/pets?limit=20&status=available&cursor=AQEAAAAAAAAAAkSyaFXD96jEr34WvngD>; rel="next"',
        },
      },
    },
  })
  @ApiErrorResponses({ 400: 'A query parameter is invalid (`limit` out of range, unknown `status`, bad `cursor`).' })
  async list(@Query() query: ListPetsQuery, @Res({ passthrough: true }) reply: FastifyReply): Promise<Pet[]> {
    const page = await this.pets.list(query);
    if (page.nextCursor !== undefined) {
      reply.header('Link', nextPageLink(reply.request.routeOptions.url!, query.limit, query.status, page.nextCursor));
    }
    return page.pets;
  }

  @Post()
  @HttpCode(201)
  @RouteSchema({ response: { 201: PET_RESPONSE_SCHEMA } })
  @ApiOperation({ operationId: 'createPet', summary: 'Add an animal' })
  @ApiHeader({
    name: IDEMPOTENCY_KEY_HEADER,
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[\\x20-\\x7e]+$' },
    description:
      'Makes the request safe to retry: a repeat with the same key and body within 24 hours returns the first ' +
      'response (with `Idempotent-Replayed: true`) and creates nothing. Keys are scoped to the API key.',
  })
  @ApiCreatedResponse({
    type: Pet,
    description: 'The animal was added, with its assigned `id`; or, with a repeated Idempotency-Key, the first response.',
    headers: {
      'Idempotent-Replayed': {
        description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key.',
        required: false,
        schema: { type: 'string', example: 'true' },
      },
    },
  })
  @ApiErrorResponses({
    400: 'The body is missing required fields, contains invalid values or unknown fields, or is not valid JSON; or the Idempotency-Key header is invalid.',
    409: 'A request with the same Idempotency-Key is still in progress (`idempotency_key_in_use`).',
    413: 'The body is larger than 16 KiB.',
    415: 'The body is not `application/json` in UTF-8.',
    422: 'The Idempotency-Key was already used with a different body (`idempotency_key_reused`).',
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
  @RouteSchema({ response: { 200: PET_RESPONSE_SCHEMA } })
  @ApiOperation({
    operationId: 'getPet',
    summary: 'Get an animal',
    deprecated: true,
    description:
      'Deprecated: announced for removal on 5 December 2030. Use `GET /pets` with the `status` filter instead.',
  })
  @ApiParam({
    name: 'petId',
    description: 'Id of the animal to retrieve.',
    schema: { type: 'integer', format: 'int64', minimum: MIN_ID, maximum: MAX_ID },
  })
  @ApiOkResponse({
    type: Pet,
    description: 'The requested animal.',
    headers: deprecationHeaderDocs(GET_PET_DEPRECATION, { required: true }),
  })
  @ApiErrorResponses(
    { 400: '`petId` is not an integer from 1 to 2^53-1.', 404: 'No animal has this id.' },
    { headers: deprecationHeaderDocs(GET_PET_DEPRECATION, { required: false }) },
  )
  get(@Param('petId', PetIdPipe) petId: number): Promise<Pet> {
    return this.pets.get(petId);
  }
}
