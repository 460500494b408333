import { DomainError } from '@hearth/domain';
import { serialiseTagMetadata, VC_TAG_METADATA_MAX_BYTES } from './vc-tag-rules';

function validationField(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect([(error as DomainError).status, (error as DomainError).code]).toEqual([400, 'validation_error']);
    return ((error as DomainError).details as { fields: Array<{ field: string }> }).fields[0].field;
  }
  throw new Error('expected a validation error');
}

describe('serialiseTagMetadata', () => {
  it('stores absent and null as null', () => {
    expect(serialiseTagMetadata(undefined)).toBeNull();
    expect(serialiseTagMetadata(null)).toBeNull();
  });

  it('serialises any other JSON value', () => {
    for (const value of [0, false, '', 'text', [1, [2]], { a: { b: null } }])
      expect(JSON.parse(serialiseTagMetadata(value) as string)).toEqual(value);
  });

  it('takes exactly 64 KiB and refuses one byte more', () => {
    const exact = 'x'.repeat(VC_TAG_METADATA_MAX_BYTES - 2);
    expect(serialiseTagMetadata(exact)).toHaveLength(VC_TAG_METADATA_MAX_BYTES);
    expect(validationField(() => serialiseTagMetadata(`${exact}x`))).toBe('metadata');
  });

  it('refuses values that are not plain JSON', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200; i++) deep = [deep];
    for (const bad of [{ s: 'a\u0000' }, Number.NaN, deep, new Date(0)])
      expect(validationField(() => serialiseTagMetadata(bad))).toBe('metadata');
  });
});
