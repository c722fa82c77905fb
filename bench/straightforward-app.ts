/**
 * The yardstick the service's targets are set against, not part of the product: the three routes (plus create)
 * written the straightforward way, as a user would write them instead of the service. NestJS 12 on
 * `@nestjs/platform-fastify`; `@nestjs/typeorm` with a `Repository<PetEntity>` and its `find`, `findOneBy` and
 * `save`; class-validator DTOs through the global `ValidationPipe`; a plain synchronous guard that looks the bearer
 * key up in a set; Nest's default JSON serialisation and error bodies. No logs, metrics, limits, cursors,
 * deprecation headers or V8 settings. It reads and writes the service's `pets` table, created by the service's
 * migrations (bench/bench-database.ts), never by `synchronize`.
 */
import 'reflect-metadata';
import {
  Body,
  CanActivate,
  Controller,
  ExecutionContext,
  Get,
  Injectable,
  Module,
  NotFoundException,
  Param,
  ParseIntPipe,
  Post,
  Query,
  UnauthorizedException,
  ValidationPipe,
} from '@nestjs/common';
import { APP_GUARD, APP_PIPE } from '@nestjs/core';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import type { FastifyRequest } from 'fastify';
import { Column, Entity, PrimaryGeneratedColumn, Repository } from 'typeorm';
import { serveNest } from './nest-yardstick.js';
import { API_KEYS, PET_STATUSES } from './yardstick-pets.js';

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

@Injectable()
class ApiKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
    if (header?.startsWith('Bearer ') && API_KEYS.has(header.slice(7))) return true;
    throw new UnauthorizedException();
  }
}

@Controller('pets')
class PetsController {
  constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {}

  @Get()
  list(@Query() query: ListPetsQuery): Promise<PetEntity[]> {
    const where = query.status === undefined ? {} : { status: query.status };
    return this.pets.find({ where, order: { id: 'ASC' }, take: query.limit });
  }

  @Get(':petId')
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

@Module({
  imports: [
    // parseInt8: the `bigint` columns as numbers, as the API answers them.
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      entities: [PetEntity],
      synchronize: false,
      parseInt8: true,
    }),
    TypeOrmModule.forFeature([PetEntity]),
  ],
  controllers: [PetsController],
  providers: [
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    {
      provide: APP_PIPE,
      useValue: new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true }),
    },
  ],
})
class StraightforwardAppModule {}

await serveNest(StraightforwardAppModule);
