import { attachmentDisposition } from './export-file';

describe('attachmentDisposition', () => {
  it('quotes a plain ASCII name', () => {
    expect(attachmentDisposition('Default')).toBe('attachment; filename="Default.json"');
  });

  it('escapes quotes and backslashes', () => {
    expect(attachmentDisposition('a "b" \\c')).toBe('attachment; filename="a \\"b\\" \\\\c.json"');
  });

  it('adds filename* for non-ASCII names, encoding every character outside RFC 5987 attr-char', () => {
    expect(attachmentDisposition("Ünï (it's)*")).toBe(
      `attachment; filename="_n_ (it's)*.json"; filename*=UTF-8''%C3%9Cn%C3%AF%20%28it%27s%29%2A.json`,
    );
  });

  it('replaces control characters and lone surrogates instead of failing', () => {
    const value = attachmentDisposition('line\nbreak\ud800');
    expect(value).toBe(
      `attachment; filename="line_break_.json"; filename*=UTF-8''line%0Abreak%EF%BF%BD.json`,
    );
  });
});
