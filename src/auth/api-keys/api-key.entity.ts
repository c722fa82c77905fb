import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** A row of `api_keys`: the key itself is never stored, only its SHA-256 digest and a short public prefix. */
@Entity('api_keys')
@Unique('api_keys_digest_key', ['digest'])
@Index('api_keys_prefix_idx', ['prefix'])
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('identity', {
    type: 'bigint',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'api_keys_pkey',
  })
  id: string;

  @Column('text')
  name: string;

  @Column('text')
  prefix: string;

  /** Hex SHA-256 of the whole key. */
  @Column('text')
  digest: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt: Date | null;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt: Date | null;

  /** The scopes the key is limited to; null (every key issued before scopes existed, and unscoped ones): all of them. */
  @Column('text', { array: true, nullable: true })
  scopes: string[] | null;

  /** When the key stops working; null: never. Set at creation (`--expires-in`) or by a rotation's overlap. */
  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt: Date | null;
}
