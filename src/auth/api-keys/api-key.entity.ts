import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, Unique } from 'typeorm';
import { IdentityPrimaryColumn } from '../../database/identity-column.js';

/** A row of `api_keys`: the key itself is never stored, only its SHA-256 digest and a short public prefix. */
@Entity('api_keys')
@Unique('api_keys_digest_key', ['digest'])
@Index('api_keys_prefix_idx', ['prefix'])
/** The keys the expiring-keys gauge counts, by expiry. */
@Index('api_keys_live_expires_at_idx', ['expiresAt'], { where: 'revoked_at IS NULL AND replaced_by IS NULL' })
export class ApiKeyEntity {
  @IdentityPrimaryColumn('api_keys_pkey')
  id: string;

  @Column('text')
  name: string;

  @Column('text')
  prefix: string;

  @Column('text')
  digest: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt: Date | null;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt: Date | null;

  /** null: every scope. */
  @Column('text', { array: true, nullable: true })
  scopes: string[] | null;

  /** null: never. A rotation brings the old key's expiry forward to the end of the overlap. */
  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt: Date | null;

  /** Its lineage's first key (docs/operating.md, "Rotating a key with no downtime"); null on that key itself. */
  @Column('bigint', { name: 'lineage_id', nullable: true })
  lineageId: string | null;

  @Column('bigint', { name: 'replaced_by', nullable: true })
  replacedById: string | null;

  @ManyToOne(() => ApiKeyEntity, { nullable: true })
  @JoinColumn({ name: 'replaced_by', foreignKeyConstraintName: 'api_keys_replaced_by_fkey' })
  replacedBy?: ApiKeyEntity | null;
}
