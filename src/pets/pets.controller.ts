import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { type ApiKeyIdentity, CurrentApiKey } from '../auth/api-key-identity.js';
import { Deprecated } from '../deprecation/deprecated.decorator.js';
import { API_PREFIX, BODY_LIMIT_BYTES } from '../edge/http.constants.js';
import * as docs from '../openapi/api-error-responses.decorator.js';
import { RequiresScope } from '../openapi/requires-scope.decorator.js';
import { IdempotencyKey } from './idempotency/idempotency-key.decorator.js';
import { NewPet } from './dto/create-pet.dto.js';
import { LIMIT_MAX, ListPetsQuery } from './dto/list-pets.query.js';
import { Pet } from './dto/pet.dto.js';
import { CURSOR_LENGTH } from './page-cursor.codec.js';
import { PET_STATUSES, PetStatus } from './pet-status.enum.js';
import { ID_SCHEMA, MAX_ID, MIN_ID, PetIdPipe } from './pet-id.js';
import { PetsService } from './pets.service.js';

const PETS_PATH = 'pets';
const LIST_PETS_URL = `/${API_PREFIX}/${PETS_PATH}`;
/** RFC 8288 `Link` to the next page, path-absolute so it never repeats a client-supplied Host. */
const nextPageLink = (limit: number, status: PetStatus | undefined, cursor: string) =>
  `<${LIST_PETS_URL}?limit=${limit}${status === undefined ? '' : `&status=${status}`}&cursor=${cursor}>; rel="next"`;
const longestStatus = PET_STATUSES.reduce((a, b) => (b.length > a.length ? b : a));
const ID_RANGE = `${MIN_ID} to 2^${Math.log2(MAX_ID + 1)}-1`;

@ApiTags('animals')
@ApiExtraModels(Pet)
@Controller(PETS_PATH)
export class PetsController {
  constructor(private readonly pets: PetsService) {}

  @Get()
  @RequiresScope('pets:read')
  @ApiOperation({
    operationId: 'listPets',
    summary: 'List all animals',
    description:
      'Returns a page of animals ordered by id ascending, at most `limit` of them, optionally only those with the ' +
      'given `status`. When more match, the `Link` header points at the next page.',
  })
  @ApiOkResponse({
    description: 'The page of animals, ordered by id ascending.',
    schema: { type: 'array', maxItems: LIMIT_MAX, items: { $ref: getSchemaPath(Pet) } },
    headers: {
      Link: {
        description:
          `Present only when more animals match: \`<…${LIST_PETS_URL}?limit=N&status=S&cursor=C>; rel="next"\` (RFC 8288), ` +
          'the same query parameters plus the cursor of the next page. The target is relative to the request URL. ' +
          'Absent on the last page.',
        schema: {
          type: 'string',
          // The longest link: the largest limit, the longest status and a cursor's fixed length.
          maxLength: nextPageLink(LIMIT_MAX, longestStatus, 'x'.repeat(CURSOR_LENGTH)).length,
          example: `<${LIST_PETS_URL}?limit=20&status=available&cursor=AQEAAAAAAAAAAkSyaFXD96jEr34WvngD>; rel="next"`,
        },
      },
    },
  })
  @docs.ApiErrorResponses({
    400: 'A query parameter is invalid (`limit` out of range, unknown `status`, bad `cursor`).',
  })
  async list(
    @Query() query: ListPetsQuery,
    @CurrentApiKey() caller: ApiKeyIdentity,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Pet[]> {
    const page = await this.pets.list(query, caller.lineage);
    if (page.nextCursor !== undefined) reply.header('Link', nextPageLink(query.limit, query.status, page.nextCursor));
    return page.pets;
  }

  @Post()
  @RequiresScope('pets:write')
  @ApiOperation({
    operationId: 'createPet',
    summary: 'Add an animal',
    description:
      'Adds an animal and answers with it, including the `id` the service assigned. The body is a `NewPet`: ' +
      '`name` and `categoryId` are required, `status` defaults to `available`, and any other property is refused ' +
      'with 400. Send an `Idempotency-Key` to make retries safe.',
  })
  @ApiCreatedResponse({
    type: Pet,
    description:
      'The animal was added, with its assigned `id`; or, with a repeated Idempotency-Key, the first response.',
    headers: {
      'Idempotent-Replayed': docs.enumHeader(
        '`true` when this is the stored response of an earlier request with the same Idempotency-Key.',
        false,
        ['true'],
      ),
    },
  })
  @docs.ApiErrorResponses({
    400: 'The body is missing required fields, contains invalid values or unknown fields, or is not valid JSON; or the Idempotency-Key header is invalid.',
    409: 'A request with the same Idempotency-Key is still in progress (`idempotency_key_in_use`).',
    413: `The body is larger than ${BODY_LIMIT_BYTES / 1024} KiB.`,
    415: 'The body is not `application/json` in UTF-8, or is compressed (a `Content-Encoding` other than `identity`).',
    422: 'The Idempotency-Key was already used with a different body (`idempotency_key_reused`).',
  })
  async create(
    @Body() newPet: NewPet,
    @IdempotencyKey() idempotencyKey: string | undefined,
    @CurrentApiKey() caller: ApiKeyIdentity,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Pet> {
    if (idempotencyKey === undefined) return this.pets.create(newPet, caller.lineage);
    const outcome = await this.pets.createIdempotently(newPet, { lineage: caller.lineage, key: idempotencyKey });
    reply.status(outcome.status);
    if (outcome.replayed) reply.header('Idempotent-Replayed', 'true');
    return outcome.body;
  }

  @Get(':petId')
  @Deprecated({
    operationId: 'getPet',
    since: new Date('2026-11-20T00:00:00Z'),
    sunset: new Date('2030-12-05T00:00:00Z'),
    successor: LIST_PETS_URL,
    advice: 'Use `GET /pets` with the `status` filter instead.',
  })
  @RequiresScope('pets:read')
  @ApiOperation({ summary: 'Get an animal' })
  @ApiParam({ name: 'petId', description: 'Id of the animal to retrieve.', schema: { ...ID_SCHEMA, example: 1 } })
  @ApiOkResponse({ type: Pet, description: 'The requested animal.' })
  @docs.ApiErrorResponses({ 400: `\`petId\` is not an integer from ${ID_RANGE}.`, 404: 'No animal has this id.' })
  get(@Param('petId', PetIdPipe) petId: number, @CurrentApiKey() caller: ApiKeyIdentity): Promise<Pet> {
    return this.pets.get(petId, caller.lineage);
  }
}
