/**
 * `Content-Disposition: attachment` for a download named after a user's asset: the quoted `filename` is an
 * ASCII fallback (quotes and backslashes escaped, control and non-ASCII characters replaced by `_`); a
 * name with non-ASCII characters also gets RFC 5987 `filename*=UTF-8''…`.
 */
export function attachmentDisposition(name: string, extension: string, fallback: string): string {
  const base = name.trim() === '' ? fallback : name;
  const full = `${base}${extension}`;
  // eslint-disable-next-line no-control-regex -- control characters cannot appear in a header
  const ascii = full.replace(/[\u0000-\u001f\u007f]/g, '_').replace(/[^\u0020-\u007e]/gu, '_');
  const quoted = ascii.replace(/[\\"]/g, (c) => `\\${c}`);
  let header = `attachment; filename="${quoted}"`;
  // eslint-disable-next-line no-control-regex -- see above
  if (/[^\u0020-\u007e]/.test(full.replace(/[\u0000-\u001f\u007f]/g, ''))) {
    // eslint-disable-next-line no-control-regex -- see above
    const clean = full.replace(/[\u0000-\u001f\u007f]/g, '_');
    const encoded = encodeURIComponent(clean).replace(
      /['()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    );
    header += `; filename*=UTF-8''${encoded}`;
  }
  return header;
}
