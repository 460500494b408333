import 'reflect-metadata';
import type { ArgumentMetadata } from '@nestjs/common';
import {
  IsInt,
  IsOptional,
  IsString,
  Length,
  Min,
  ValidateNested,
  getMetadataStorage,
} from 'class-validator';
import { Type } from 'class-transformer';
import { createValidationPipe, memoizeValidationMetadata } from './validation';

class InnerDto {
  @IsInt()
  @Min(1)
  n!: number;
}

class BaseDto {
  @IsString()
  @Length(1, 5)
  name!: string;
}

class ChildDto extends BaseDto {
  @IsOptional()
  @ValidateNested()
  @Type(() => InnerDto)
  inner?: InnerDto;
}

const body = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype });

describe('memoizeValidationMetadata', () => {
  const storage = getMetadataStorage();
  memoizeValidationMetadata(storage);

  it('answers the plain lookup from the cache with what class-validator computes', () => {
    const first = storage.getTargetValidationMetadatas(
      ChildDto,
      undefined as unknown as string,
      false,
      false,
    );
    const again = storage.getTargetValidationMetadatas(
      ChildDto,
      undefined as unknown as string,
      false,
      false,
    );
    expect(again).toBe(first);
    // The inherited rules of BaseDto come with the class's own.
    expect(new Set(first.map((m) => m.propertyName))).toEqual(new Set(['name', 'inner']));
    const grouped = storage.groupByPropertyName(first);
    expect(storage.groupByPropertyName(first)).toBe(grouped);
    expect(Object.keys(grouped).sort()).toEqual(['inner', 'name']);
  });

  it('passes lookups with groups or always through, uncached', () => {
    const withGroups = storage.getTargetValidationMetadatas(
      ChildDto,
      undefined as unknown as string,
      false,
      false,
      ['g'],
    );
    expect(
      storage.getTargetValidationMetadatas(ChildDto, undefined as unknown as string, false, false, ['g']),
    ).not.toBe(withGroups);
    const always = storage.getTargetValidationMetadatas(
      ChildDto,
      undefined as unknown as string,
      true,
      false,
    );
    expect(
      storage.getTargetValidationMetadatas(ChildDto, undefined as unknown as string, true, false),
    ).not.toBe(always);
  });

  it('groups an array that did not come from the cache afresh each time', () => {
    const own = [
      ...storage.getTargetValidationMetadatas(BaseDto, undefined as unknown as string, false, false),
    ];
    expect(storage.groupByPropertyName(own)).not.toBe(storage.groupByPropertyName(own));
  });

  it('is installed once per storage', () => {
    const lookup = storage.getTargetValidationMetadatas;
    memoizeValidationMetadata(storage);
    createValidationPipe();
    expect(storage.getTargetValidationMetadatas).toBe(lookup);
  });

  it('drops the cache when rules are added, so a class decorated later is validated by them', async () => {
    class LateDto {
      value!: string;
    }
    const pipe = createValidationPipe();
    // Before any rule: an unknown property is refused (whitelist), the class itself has no rules.
    const before = storage.getTargetValidationMetadatas(
      LateDto,
      undefined as unknown as string,
      false,
      false,
    );
    expect(before).toHaveLength(0);
    IsString()(LateDto.prototype, 'value');
    const after = storage.getTargetValidationMetadatas(LateDto, undefined as unknown as string, false, false);
    expect(after.map((m) => m.propertyName)).toEqual(['value']);
    await expect(pipe.transform({ value: 'ok' }, body(LateDto))).resolves.toEqual({ value: 'ok' });
    await expect(pipe.transform({ value: 1 }, body(LateDto))).rejects.toMatchObject({
      response: { code: 'validation_error', details: { fields: [{ field: 'value' }] } },
    });
  });
});

describe('the global validation pipe, with the cached metadata', () => {
  const pipe = createValidationPipe();

  it('validates, transforms nested classes and keeps inherited rules, on every repeat', async () => {
    for (let i = 0; i < 3; i++) {
      const ok = await pipe.transform({ name: 'abc', inner: { n: 2 } }, body(ChildDto));
      expect(ok).toBeInstanceOf(ChildDto);
      expect(ok.inner).toBeInstanceOf(InnerDto);
      await expect(
        pipe.transform({ name: 'toolong', inner: { n: 0 } }, body(ChildDto)),
      ).rejects.toMatchObject({
        response: {
          code: 'validation_error',
          // The class's own rules first, then the inherited ones (class-validator's order).
          details: {
            fields: [
              { field: 'inner.n', problems: ['n must not be less than 1'] },
              { field: 'name', problems: ['name must be shorter than or equal to 5 characters'] },
            ],
          },
        },
      });
      await expect(pipe.transform({ name: 'abc', extra: 1 }, body(ChildDto))).rejects.toMatchObject({
        response: {
          details: { fields: [{ field: 'extra', problems: ['property extra should not exist'] }] },
        },
      });
    }
  });
});
