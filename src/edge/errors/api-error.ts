import { HttpException } from '@nestjs/common';
import type { ErrorBodyDto } from './error-body.dto.js';
import { ErrorCode } from './error-code.js';

export type ErrorBody = ErrorBodyDto;

/** An error that knows how it leaves: status, stable code, a message safe to show, the headers its status needs. */
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

export const validationFailed = (message: string) => new ApiError(400, ErrorCode.ValidationFailed, message);

export const noResourceAtPath = () => new ApiError(404, ErrorCode.NotFound, 'No resource exists at this path.');
