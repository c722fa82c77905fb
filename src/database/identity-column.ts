import { PrimaryGeneratedColumn } from 'typeorm';

/** A `bigint GENERATED ALWAYS AS IDENTITY` primary key, its constraint named as the migrations name it. */
export const IdentityPrimaryColumn = (constraint: string) =>
  PrimaryGeneratedColumn('identity', {
    type: 'bigint',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: constraint,
  });
