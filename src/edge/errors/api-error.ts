import { HttpException } from '@nestjs/common';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ERROR_CODES, ErrorCode } from './error-code.js';

/** The documented shape of every error response (`ApiError.toBody()`); `Error` is taken in TypeScript. */
@ApiSchema({ name: 'Error', description: 'Every error response has this shape, with media type application/json.' })
export class ErrorBody {
  @ApiProperty({
    enum: ERROR_CODES,
    enumName: 'ErrorCode',
    description: 'Machine-readable error code, from a closed set.',
    example: ErrorCode.NotFound,
  })
  code: ErrorCode;

  @ApiProperty({ description: 'Human-readable description, safe to show.', example: 'No animal has id 42.' })
  message: string;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 400,
    maximum: 599,
    description: 'The HTTP status code of the response.',
    example: 404,
  })
  status: number;
}

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
