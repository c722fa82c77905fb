/**
 * A yardstick, not part of the product (`npm run bench -- --floor`):
 * the parts of the stack the service is required to use, each at its cheapest, and nothing else.
 * NestJS 12 on Fastify with the global `@nestjs/passport` bearer guard
 * (passport-http-bearer, keys in an in-memory set), the global `ValidationPipe` with class-validator DTOs for the
 * query and the body, the Error filter, an interceptor setting the deprecation headers on `GET /v1/pets/{petId}`,
 * and TypeORM's `DataSource` running bench/ceiling.ts's statements (`YARDSTICK_SQL`), with the same response schemas.
 * No logging, metrics, rate limits, request ids, security headers or cursors: whatever this server costs beyond
 * the ceiling, the service pays before any of its own features. bench.ts gives it the service's two V8 flags
 * (`npm run start:prod`'s), so that it is measured at its cheapest.
 */
import 'reflect-metadata';
import {
  Body,
  CallHandler,
  Controller,
  ExecutionContext,
  Get,
  Injectable,
  Module,
  NestInterceptor,
  NotFoundException,
  Param,
  Post,
  Query,
  UseInterceptors,
  ValidationPipe,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { RouteSchema } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import type { Observable } from 'rxjs';
import { DataSource } from 'typeorm';
import { BearerGuard, BearerStrategy, DEPRECATION_HEADERS, ErrorFilter, serveNest } from './nest-yardstick.js';
import { PET_SCHEMA, PET_STATUSES, PetRow, toPet, YARDSTICK_SQL } from './yardstick-pets.js';

const database = await new DataSource({
  type: 'postgres',
  url: process.env.DATABASE_URL,
  extra: { max: 10 },
}).initialize();

class ListQuery {
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit = 20;

  @IsOptional()
  @IsIn(PET_STATUSES)
  status?: string;
}

class PetIdParams {
  @Type(() => Number)
  @IsInt()
  @Min(1)
  petId!: number;
}

class NewPetBody {
  @IsString()
  @Length(1, 100)
  name!: string;

  @IsInt()
  @Min(1)
  categoryId!: number;

  @IsOptional()
  @IsIn(PET_STATUSES)
  status?: string;
}

@Injectable()
class DeprecationInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    context.switchToHttp().getResponse<FastifyReply>().headers(DEPRECATION_HEADERS);
    return next.handle();
  }
}

@Controller('pets')
class PetsController {
  @Get()
  @RouteSchema({ response: { 200: { type: 'array', items: PET_SCHEMA } } })
  async list(@Query() { limit, status }: ListQuery) {
    const rows =
      status === undefined
        ? await database.query<PetRow[]>(YARDSTICK_SQL.list, [limit])
        : await database.query<PetRow[]>(YARDSTICK_SQL.listByStatus, [status, limit]);
    return rows.map(toPet);
  }

  @Get(':petId')
  @UseInterceptors(DeprecationInterceptor)
  @RouteSchema({ response: { 200: PET_SCHEMA } })
  async get(@Param() { petId }: PetIdParams) {
    const rows = await database.query<PetRow[]>(YARDSTICK_SQL.byId, [petId]);
    if (rows.length === 0) throw new NotFoundException();
    return toPet(rows[0]);
  }

  @Post()
  @RouteSchema({ response: { 201: PET_SCHEMA } })
  async create(@Body() body: NewPetBody) {
    const rows = await database.query<PetRow[]>(YARDSTICK_SQL.insert, [
      body.name,
      body.categoryId,
      body.status ?? 'available',
    ]);
    return toPet(rows[0]);
  }
}

@Module({
  imports: [PassportModule],
  controllers: [PetsController],
  providers: [
    BearerStrategy,
    { provide: APP_GUARD, useClass: BearerGuard },
    { provide: APP_PIPE, useValue: new ValidationPipe({ transform: true }) },
    { provide: APP_FILTER, useClass: ErrorFilter },
  ],
})
class FloorModule {}

await serveNest(FloorModule, { afterClose: () => database.destroy() });
