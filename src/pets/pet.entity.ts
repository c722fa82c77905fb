import { Check, Column, CreateDateColumn, Entity, Index } from 'typeorm';
import { IdentityPrimaryColumn } from '../database/identity-column.js';
import { PET_STATUSES, PetStatus } from './pet-status.enum.js';

/** A row of `pets`. node-postgres returns `bigint` columns as strings; `toPet` converts them. */
@Entity('pets')
@Index('pets_status_id_idx', ['status', 'id'])
@Check('pets_status_check', `"status" IN (${PET_STATUSES.map((status) => `'${status}'`).join(', ')})`)
export class PetEntity {
  @IdentityPrimaryColumn('pets_pkey')
  id: string;

  @Column('text')
  name: string;

  @Column('bigint', { name: 'category_id' })
  categoryId: string;

  @Column('text', { default: PetStatus.Available })
  status: PetStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
