import { BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';

interface FieldProblem {
  field: string;
  problems: string[];
}

function flatten(errors: ValidationError[], parent = ''): FieldProblem[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [{ field, problems: Object.values(error.constraints) }] : [];
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * Global validation (ARCHITECTURE.md rule 7): unknown fields are rejected, and the 400 names every
 * field with its problems in `details.fields`.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => {
      const fields = flatten(errors);
      const message = fields.map((f) => f.problems.join(', ')).join('; ') || 'Invalid request';
      return new BadRequestException({ code: 'validation_error', message, details: { fields } });
    },
  });
}
