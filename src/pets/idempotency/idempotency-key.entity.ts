import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** The first response to a keyed request, per API key lineage (`api_key_id`: the id of the lineage's first key). */
@Entity('idempotency_keys')
@Index('idempotency_keys_created_at_idx', ['createdAt'])
export class IdempotencyKeyEntity {
  @PrimaryColumn('text', { name: 'api_key_id', primaryKeyConstraintName: 'idempotency_keys_pkey' })
  apiKeyId: string;

  @PrimaryColumn('text', { name: 'idempotency_key', primaryKeyConstraintName: 'idempotency_keys_pkey' })
  idempotencyKey: string;

  @Column('text', { name: 'request_fingerprint' })
  requestFingerprint: string;

  @Column('smallint', { name: 'response_status', nullable: true })
  responseStatus: number | null;

  @Column('jsonb', { name: 'response_body', nullable: true })
  responseBody: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
