/**
 * The routes as a user would write them instead of the service, shared by the straightforward app and the
 * feature-equal app: `@nestjs/typeorm` with a `Repository<PetEntity>` and its `find`, `findOneBy` and `save`, and
 * class-validator DTOs for the global `ValidationPipe` (PET_VALIDATION). They read and write the service's `pets`
 * table, created by the service's migrations (bench/bench-database.ts), never by `synchronize`.
 */
import {
  Body,
  Controller,
  Get,
  NotFoundException,
  Param,
  ParseIntPipe,
  Post,
  Query,
  type Type as Class,
  type ValidationPipeOptions,
} from '@nestjs/common';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { Column, Entity, PrimaryGeneratedColumn, Repository } from 'typeorm';
import { PET_STATUSES } from './yardstick-pets.js';

type PetStatus = (typeof PET_STATUSES)[number];

@Entity('pets')
class PetEntity {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id: number;

  @Column('text')
  name: string;

  @Column('bigint', { name: 'category_id' })
  categoryId: number;

  @Column('text', { default: 'available' })
  status: PetStatus;
}

class ListPetsQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit: number = 20;

  @IsOptional()
  @IsIn(PET_STATUSES)
  status?: PetStatus;
}

class CreatePetDto {
  @IsString()
  @Length(1, 255)
  name: string;

  @IsInt()
  @Min(1)
  categoryId: number;

  @IsOptional()
  @IsIn(PET_STATUSES)
  status?: PetStatus;
}

/** The global `ValidationPipe`'s options: query strings converted, unknown body properties refused. */
export const PET_VALIDATION: ValidationPipeOptions = { transform: true, whitelist: true, forbidNonWhitelisted: true };

/** The database and the repository; parseInt8: the `bigint` columns as numbers, as the API answers them. */
export const PET_DATABASE = [
  TypeOrmModule.forRoot({
    type: 'postgres',
    url: process.env.DATABASE_URL,
    entities: [PetEntity],
    synchronize: false,
    parseInt8: true,
  }),
  TypeOrmModule.forFeature([PetEntity]),
];

const none: MethodDecorator = () => {};

/** The controller of `/pets`; `getPetDecorator` marks get by id (the feature-equal app deprecates it). */
export function petsController(getPetDecorator: MethodDecorator = none): Class {
  @Controller('pets')
  class PetsController {
    constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {}

    @Get()
    list(@Query() query: ListPetsQuery): Promise<PetEntity[]> {
      const where = query.status === undefined ? {} : { status: query.status };
      return this.pets.find({ where, order: { id: 'ASC' }, take: query.limit });
    }

    @Get(':petId')
    @getPetDecorator
    async get(@Param('petId', ParseIntPipe) id: number): Promise<PetEntity> {
      const pet = await this.pets.findOneBy({ id });
      if (!pet) throw new NotFoundException();
      return pet;
    }

    @Post()
    create(@Body() body: CreatePetDto): Promise<PetEntity> {
      return this.pets.save(this.pets.create(body));
    }
  }
  return PetsController;
}
