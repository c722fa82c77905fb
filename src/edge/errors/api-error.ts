import { HttpException } from '@nestjs/common';
import { ErrorCode } from './error-code.js';

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

/**
 * An error that already knows how it leaves the service: status, stable code,
 * a message safe to show the client, and any headers the status calls for.
 */
export class ApiError extends HttpException {
  constructor(
    status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message, status);
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.getStatus() };
  }
}
