import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { ApiKeyIdentity } from './api-key-identity.js';
import { ApiKeyStore } from './api-key-store.js';
import { REALM } from '../edge/http.constants.js';
import { KeyRefusedError } from './key-refused.error.js';

@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly keys: ApiKeyStore) {
    super({ realm: REALM });
  }

  /**
   * passport-http-bearer also reads `access_token` from the query string and
   * the body; RFC 6750 §2.3 advises against it (URLs end up in logs), so the
   * strategy only ever sees the Authorization header.
   */
  authenticate(request: { headers: { authorization?: string } }, options?: object): void {
    const headers = { authorization: request.headers.authorization };
    super.authenticate({ headers } as never, options);
  }

  /** A refused key is thrown with its reason, which passport hands to the guard as the error. */
  async validate(token: string): Promise<ApiKeyIdentity> {
    const verdict = await this.keys.verify(token);
    if (typeof verdict === 'string') throw new KeyRefusedError(verdict);
    return verdict;
  }
}
