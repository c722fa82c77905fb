import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { ApiKeyIdentity, AuthenticatedRequest } from './api-key-identity.js';

/** The caller's identity, as the guard set it on `request.user`. */
export const CurrentApiKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiKeyIdentity =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().user!,
);
