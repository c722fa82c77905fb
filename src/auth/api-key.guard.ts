import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { AuthenticatedRequest } from './api-key-identity.js';
import { ApiKeyRefusals } from './api-key-refusals.js';
import { type ApiKeyScope, REQUIRED_SCOPE } from './api-key-scope.js';
import { insufficientScope, unauthorized } from './key-refused.error.js';
import { IS_PUBLIC } from './public.decorator.js';

/** The global guard (@nestjs/passport's AuthGuard): public routes pass; others need a key (BearerStrategy) and scope. */
@Injectable()
export class ApiKeyGuard extends AuthGuard('bearer') {
  /** Per handler: public, or the scope it needs (null: any key). */
  private readonly routes = new WeakMap<object, { public: boolean; scope: ApiKeyScope | null }>();

  constructor(
    private readonly reflector: Reflector,
    private readonly refusals: ApiKeyRefusals,
  ) {
    super();
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.accessOf(context);
    if (access.public) return true;

    await super.canActivate(context);
    const scopes = context.switchToHttp().getRequest<AuthenticatedRequest>().user!.scopes;
    if (access.scope !== null && scopes !== null && !scopes.includes(access.scope)) {
      this.refusals.count('insufficient_scope');
      throw insufficientScope(access.scope);
    }
    return true;
  }

  private accessOf(context: ExecutionContext) {
    const handler = context.getHandler();
    let access = this.routes.get(handler);
    if (!access) {
      const targets = [handler, context.getClass()];
      access = {
        public: this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, targets) ?? false,
        scope: this.reflector.getAllAndOverride<ApiKeyScope | undefined>(REQUIRED_SCOPE, targets) ?? null,
      };
      this.routes.set(handler, access);
    }
    return access;
  }

  /** A refused key arrives as `error` (from the strategy); `status` 400 is passport-http-bearer's malformed header. */
  handleRequest<T>(error: Error | null, identity: T | false, _info: unknown, _context: unknown, status?: number): T {
    if (error) throw error;
    if (identity) return identity;
    throw status === 400
      ? unauthorized('The Authorization header is malformed: use Bearer <key>.', 'invalid_request')
      : unauthorized('An API key is required: send Authorization: Bearer <key>.');
  }
}
