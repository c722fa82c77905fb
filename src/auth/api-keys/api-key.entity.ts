import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
} from 'typeorm';

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

  /**
   * When the key stops working; null: never. Set at creation (`--expires-in`), inherited by a replacement, and
   * brought forward to the end of the overlap on the key a rotation replaces. A key without a replacement therefore
   * holds its lineage's own expiry, which is what its replacement inherits.
   */
  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt: Date | null;

  /**
   * The first key of the lineage this key belongs to (the key created with `create`, which every rotation's
   * replacement descends from); null on that first key itself, and on every key issued before lineages were kept.
   * Idempotency-Keys are scoped by it, so a retry with the replacement key finds the first response.
   */
  @Column('bigint', { name: 'lineage_id', nullable: true })
  lineageId: string | null;

  /** The key that replaced this one (`rotate`); null until then. A key is replaced at most once. */
  @Column('bigint', { name: 'replaced_by', nullable: true })
  replacedById: string | null;

  @ManyToOne(() => ApiKeyEntity, { nullable: true })
  @JoinColumn({ name: 'replaced_by', foreignKeyConstraintName: 'api_keys_replaced_by_fkey' })
  replacedBy?: ApiKeyEntity | null;
}
