import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Deprecated } from '../http/deprecated.decorator.js';
import { NewPet } from './dto/create-pet.dto.js';
import { ListPetsQuery } from './dto/list-pets.query.js';
import { Pet } from './dto/pet.dto.js';
import { nextPageLink } from './next-page-link.js';
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
  async list(@Query() query: ListPetsQuery, @Res({ passthrough: true }) reply: FastifyReply): Promise<Pet[]> {
    const page = await this.pets.list(query);
    if (page.nextCursor !== undefined) {
      reply.header('Link', nextPageLink(reply.request.routeOptions.url!, query.limit, query.status, page.nextCursor));
    }
    return page.pets;
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ operationId: 'createPet', summary: 'Add an animal' })
  create(@Body() newPet: NewPet): Promise<Pet> {
    return this.pets.create(newPet);
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
