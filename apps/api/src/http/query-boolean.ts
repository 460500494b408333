import { Transform } from 'class-transformer';

/**
 * A boolean query flag: `true`/`1` and `false`/`0` become booleans; anything else stays as it is and
 * fails the field's `@IsBoolean` (or `@IsIn`), so every boolean query of the API reads the same way.
 */
export const queryBoolean = ({ value }: { value: unknown }): unknown =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;

/** `@QueryBool()`: `@Transform(queryBoolean)`. */
export const QueryBool = () => Transform(queryBoolean);
