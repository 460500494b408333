import {
  HttpException,
  Inject,
  Injectable,
  PayloadTooLargeException,
  type CallHandler,
  type ExecutionContext,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import { CHARACTER_IMPORT_MAX_BYTES, CHARACTER_PNG_MAX_BYTES, importPayloadTooLarge } from '@hearth/app';
import { DomainError } from '@hearth/domain';
import {
  BODY_BUFFER_BUDGET,
  BODY_BUSY_MESSAGE,
  type BodyBufferBudget,
  holdRequestBody,
} from '../http/body-budget';

/** The uploaded card file multer keeps in memory (`file` form field). */
export interface UploadedCardFile {
  buffer: Buffer;
  size: number;
  originalname: string;
}

const LIMITS = { fileSize: CHARACTER_PNG_MAX_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024 };
const Upload = FileInterceptor('file', { limits: LIMITS });

/** The most a multipart upload holds in memory: the file, the fields, and room for part headers. */
const MULTIPART_MAX_HELD_BYTES = LIMITS.fileSize + LIMITS.fields * LIMITS.fieldSize + 64 * 1024;

/**
 * Body intake of `POST /import/character`, before validation:
 * - multipart/form-data: multer reads the `file` field into memory (at most 5 MiB: 413
 *   `import_payload_too_large`); the form's `create_session` `true`/`false` becomes a boolean. Before
 *   multer reads, the body reserves its Content-Length (a chunked one: the most multer holds, about
 *   5.7 MiB) of the body buffer budget, released once multer is done; 503 `resource_busy` with
 *   Retry-After, body unread, if it does not fit;
 * - JSON: the 200 KiB request body limit of spec 3 (413 `import_payload_too_large`), measured by
 *   Content-Length (the global body parser has checked it against the bytes read) and by the parsed body
 *   re-serialised (for chunked or compressed bodies). A body carrying `png_base64` is held to the PNG limits instead (the image
 *   may exceed 200 KiB; its card may not).
 */
@Injectable()
export class CharacterImportInterceptor extends Upload {
  @Inject(BODY_BUFFER_BUDGET) private readonly budget!: BodyBufferBudget;

  override async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<Request>();
    if (request.is('multipart/*')) {
      const response = context.switchToHttp().getResponse<Response>();
      const hold = holdRequestBody(this.budget, request, response, {
        maxBytes: MULTIPART_MAX_HELD_BYTES,
        meter: false,
        inflates: false,
      });
      if (!hold) {
        response.setHeader('Retry-After', '1');
        throw new DomainError('resource_busy', 503, BODY_BUSY_MESSAGE);
      }
      let handled: Observable<unknown>;
      try {
        handled = await super.intercept(context, next);
      } catch (error) {
        throw uploadError(error);
      } finally {
        hold.release();
      }
      const body = request.body as Record<string, unknown> | undefined;
      if (body && (body.create_session === 'true' || body.create_session === 'false')) {
        body.create_session = body.create_session === 'true';
      }
      return handled;
    }
    const body = request.body as unknown;
    const carriesPng =
      typeof body === 'object' && body !== null && 'png_base64' in (body as Record<string, unknown>);
    if (!carriesPng) {
      const size = requestBodyBytes(request);
      if (size > CHARACTER_IMPORT_MAX_BYTES) {
        throw importPayloadTooLarge('The request body', size, CHARACTER_IMPORT_MAX_BYTES);
      }
    }
    return next.handle();
  }
}

function requestBodyBytes(request: Request): number {
  const header = request.headers['content-length'];
  const declared = header === undefined ? 0 : Number(header);
  // The body re-serialised is never longer than the JSON sent uncompressed; it covers chunked and
  // compressed bodies, whose Content-Length is missing or counts the compressed bytes.
  const parsed = request.body === undefined ? 0 : Buffer.byteLength(JSON.stringify(request.body), 'utf8');
  return Math.max(Number.isFinite(declared) ? declared : 0, parsed);
}

function uploadError(error: unknown): unknown {
  if (error instanceof PayloadTooLargeException) {
    return new DomainError(
      'import_payload_too_large',
      413,
      `The uploaded file is larger than ${CHARACTER_PNG_MAX_BYTES} bytes`,
      { max_bytes: CHARACTER_PNG_MAX_BYTES },
    );
  }
  if (error instanceof HttpException && error.getStatus() === 415) return error;
  const message = error instanceof Error ? error.message : 'Malformed multipart body';
  return new DomainError('validation_error', 400, `Malformed multipart body: ${message}`);
}
