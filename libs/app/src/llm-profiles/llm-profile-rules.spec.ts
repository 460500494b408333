import { DomainError } from '@hearth/domain';
import { SecretBox } from '@hearth/platform';
import { mergeTurnParams, normaliseBindingParams, readKey, tryReadKey } from './llm-profile-rules';

describe('binding params', () => {
  it('keeps valid params and nulls', () => {
    expect(
      normaliseBindingParams({
        temperature: 0,
        top_p: 1,
        top_k: null,
        reasoning_effort: 'low',
        stream: true,
      }),
    ).toEqual({
      temperature: 0,
      top_p: 1,
      top_k: null,
      reasoning_effort: 'low',
      stream: true,
    });
    expect(normaliseBindingParams({})).toEqual({});
  });

  it('accepts max_retries at both ends of 0-10', () => {
    expect(normaliseBindingParams({ max_retries: 0 })).toEqual({ max_retries: 0 });
    expect(normaliseBindingParams({ max_retries: 10 })).toEqual({ max_retries: 10 });
  });

  it.each([
    [{ temperature: -0.01 }, 'params.temperature'],
    [{ presence_penalty: 2.5 }, 'params.presence_penalty'],
    [{ max_context_tokens: 1.5 }, 'params.max_context_tokens'],
    [{ timeout_ms: 0 }, 'params.timeout_ms'],
    [{ max_retries: 11 }, 'params.max_retries'],
    [{ max_retries: -1 }, 'params.max_retries'],
    [{ temperature: Number.NaN }, 'params.temperature'],
    [{ stop: ['x'] }, 'params.stop'],
  ])('refuses %j with 400 invalid_params naming %s', (params, field) => {
    const error = (() => {
      try {
        normaliseBindingParams(params);
      } catch (e) {
        return e;
      }
    })() as DomainError;
    expect(error).toBeInstanceOf(DomainError);
    expect(error.code).toBe('invalid_params');
    expect(error.status).toBe(400);
    expect((error.details as { fields: Array<{ field: string }> }).fields[0].field).toBe(field);
  });

  it('refuses a non-object', () => {
    expect(() => normaliseBindingParams([])).toThrow(expect.objectContaining({ code: 'invalid_params' }));
    expect(() => normaliseBindingParams('x')).toThrow(expect.objectContaining({ code: 'invalid_params' }));
  });
});

describe('mergeTurnParams', () => {
  it('puts binding values over request values; a binding null removes the field; request nulls are dropped', () => {
    expect(
      mergeTurnParams(
        { temperature: 1, top_p: 0.5, max_output_tokens: 10, top_k: null },
        { temperature: 0.2, top_p: null },
      ),
    ).toEqual({ temperature: 0.2, max_output_tokens: 10 });
    expect(mergeTurnParams(null, { top_k: 4, stream: null })).toEqual({ top_k: 4 });
    expect(mergeTurnParams({ temperature: 1 }, null)).toEqual({ temperature: 1 });
  });
});

describe('reading a stored key', () => {
  const key = Buffer.alloc(32, 7);
  const box = new SecretBox(key);

  it('decrypts, and tells an unreadable ciphertext apart from a missing master key', () => {
    const ciphertext = box.encrypt('sk-secret-value-123456');
    expect(tryReadKey(box, ciphertext)).toEqual({ ok: true, apiKey: 'sk-secret-value-123456' });
    expect(tryReadKey(box, 'garbage')).toEqual({ ok: false, code: 'secret_invalid_format' });
    expect(tryReadKey(new SecretBox(Buffer.alloc(32, 8)), ciphertext)).toEqual({
      ok: false,
      code: 'secret_invalid_format',
    });
    expect(tryReadKey(new SecretBox(null), ciphertext)).toEqual({ ok: false, code: 'secret_unavailable' });
  });

  it('throws 500 secret_invalid_format / 503 secret_unavailable where a key is read directly, never with the key', () => {
    const ciphertext = box.encrypt('sk-secret-value-123456');
    expect(() =>
      readKey(new SecretBox(Buffer.alloc(32, 9)), { id: 'llmp_1', api_key_ciphertext: ciphertext }),
    ).toThrow(expect.objectContaining({ code: 'secret_invalid_format', status: 500 }));
    expect(() => readKey(new SecretBox(null), { id: 'llmp_1', api_key_ciphertext: ciphertext })).toThrow(
      expect.objectContaining({ code: 'secret_unavailable', status: 503 }),
    );
    expect(readKey(box, { id: 'llmp_1', api_key_ciphertext: ciphertext })).toBe('sk-secret-value-123456');
  });
});
