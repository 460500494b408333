import { BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';

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

type MetadataStorage = ReturnType<typeof getMetadataStorage>;
type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];
type Grouped = Record<string, ValidationMetadata[]>;
const MEMOIZED = Symbol.for('hearth:validation-metadata-memo');

/**
 * Caches class-validator's metadata lookups, which it otherwise recomputes on every validation:
 * `getTargetValidationMetadatas` filters the class's rules and walks every decorated class of the
 * process for parents (`instanceof` each), and Nest's ValidationPipe calls it twice per body (its
 * binary-value check, then `validate`); `groupByPropertyName` regroups the result each time. The
 * answers only change when rules are added (a class decorated later), so every add clears the
 * cache. Only the plain lookup is cached (no schema, no groups, `always`/`strictGroups` off: what
 * the global pipe asks); any other call goes through. The cached arrays are shared: class-validator
 * and Nest only read them. Installed once per metadata storage (it is global to the process).
 */
export function memoizeValidationMetadata(storage: MetadataStorage = getMetadataStorage()): void {
  const marked = storage as MetadataStorage & { [MEMOIZED]?: true };
  if (marked[MEMOIZED]) return;
  marked[MEMOIZED] = true;
  const targetMetadatas = storage.getTargetValidationMetadatas.bind(storage);
  const groupByPropertyName = storage.groupByPropertyName.bind(storage);
  const addValidationMetadata = storage.addValidationMetadata.bind(storage);
  let byTarget = new Map<
    Parameters<MetadataStorage['getTargetValidationMetadatas']>[0],
    ValidationMetadata[]
  >();
  let grouped = new WeakMap<ValidationMetadata[], Grouped>();
  let cached = new WeakSet<ValidationMetadata[]>();

  storage.addValidationMetadata = (metadata) => {
    byTarget = new Map();
    grouped = new WeakMap();
    cached = new WeakSet();
    addValidationMetadata(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (schema !== undefined || always || strictGroups || (groups !== undefined && groups.length > 0))
      return targetMetadatas(target, schema, always, strictGroups, groups);
    let metadatas = byTarget.get(target);
    if (!metadatas) {
      metadatas = targetMetadatas(target, schema, always, strictGroups, groups);
      byTarget.set(target, metadatas);
      cached.add(metadatas);
    }
    return metadatas;
  };
  storage.groupByPropertyName = (metadatas) => {
    let byProperty = grouped.get(metadatas);
    if (!byProperty) {
      byProperty = groupByPropertyName(metadatas);
      // Only an array from the cache above comes back again; any other is grouped afresh.
      if (cached.has(metadatas)) grouped.set(metadatas, byProperty);
    }
    return byProperty;
  };
}

/**
 * A body class whose route names its own 400 code for a malformed body (spec 2's injection routes:
 * `invalid_injection_payload`) declares it as `static readonly validationErrorCode`; every other
 * body answers `validation_error`.
 */
export interface WithValidationErrorCode {
  validationErrorCode?: string;
}

/**
 * Global validation (ARCHITECTURE.md rule 7): unknown fields are rejected, and the 400 names every
 * field with its problems in `details.fields`.
 */
export function createValidationPipe(): ValidationPipe {
  memoizeValidationMetadata();
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    // Each error refers to the body it was found in (a reference, never sent): its class may name the code.
    validationError: { target: true },
    exceptionFactory: (errors) => {
      const fields = flatten(errors);
      const message = fields.map((f) => f.problems.join(', ')).join('; ') || 'Invalid request';
      const body = errors[0]?.target?.constructor as WithValidationErrorCode | undefined;
      const code = body?.validationErrorCode ?? 'validation_error';
      return new BadRequestException({ code, message, details: { fields } });
    },
  });
}
