import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-http-bearer';
import type { ApiKeyIdentity } from './api-key-identity.js';
import { ApiKeyStore } from './api-key-store.js';
import { KeyRefusedError } from './key-refused.error.js';

/** passport-http-bearer over the key store: the key from `Authorization: Bearer <key>`, and who it belongs to. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly keys: ApiKeyStore) {
    super();
  }

  /** Headers only: `access_token` in the query or body (RFC 6750 §2.2-2.3) is ignored, since URLs end up in logs. */
  authenticate(request: Pick<FastifyRequest, 'headers'>, options?: object): void {
    super.authenticate({ headers: request.headers } as never, options);
  }

  /** A refused key is thrown with its reason, which the guard receives as passport's error. */
  async validate(token: string): Promise<ApiKeyIdentity> {
    const verdict = await this.keys.verify(token);
    if (typeof verdict === 'string') throw new KeyRefusedError(verdict);
    return verdict;
  }
}
