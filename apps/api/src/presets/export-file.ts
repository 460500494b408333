import type { Response } from 'express';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `Content-Disposition: attachment` for a library export named `<name>.json` (spec 3 "Exports"): the
 * quoted filename is ASCII (other characters become `_`, quotes and backslashes are escaped); a name
 * with other characters also gets RFC 5987 `filename*=UTF-8''…`.
 */
export function attachmentDisposition(name: string): string {
  const file = `${name}.json`.replace(LONE_SURROGATE, '\ufffd');
  const ascii = file.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, (c) => `\\${c}`);
  if (/^[\x20-\x7e]*$/.test(file)) return `attachment; filename="${ascii}"`;
  const extended = encodeURIComponent(file).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${extended}`;
}

/** Marks the response as a JSON file download; the handler returns the file as a `Raw` value. */
export function sendAsJsonFile(res: Response, name: string): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Disposition', attachmentDisposition(name));
}
