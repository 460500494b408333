'use strict';
// A minimal SSE reader over raw `http.get` (EventSource clients are too heavy for 1,000 streams):
// parses `id:`/`event:`/`data:` blocks and comment lines, and hands each complete event to `onEvent`.
const http = require('node:http');

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

/**
 * Opens one stream. `onEvent({id, event, data, raw})` gets every complete block; `onOpen(res)` the
 * response (status and headers). With `idsOnly`, blocks are not parsed beyond a leading `id:` line
 * (`event` and `data` stay empty): the cheap path for many streams. Returns `{close()}`.
 */
function openSse(url, { headers = {}, onOpen, onEvent, onClose, onError, keepRaw = false, idsOnly = false }) {
  let closed = false;
  const req = http.get(url, { agent, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
    res.socket.setNoDelay(true);
    if (onOpen) onOpen(res);
    if (res.statusCode !== 200) {
      res.resume();
      return;
    }
    res.setEncoding('utf8');
    let buffer = '';
    res.on('data', (chunk) => {
      buffer += chunk;
      let end;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = idsOnly && !keepRaw ? idOf(block) : parseBlock(block);
        if (event && onEvent) {
          if (keepRaw) event.raw = `${block}\n\n`;
          onEvent(event);
        }
      }
    });
    res.on('close', () => {
      if (!closed && onClose) onClose();
    });
  });
  req.on('error', (error) => {
    if (!closed && onError) onError(error);
  });
  return {
    close() {
      closed = true;
      req.destroy();
    },
  };
}

function idOf(block) {
  if (!block.startsWith('id:')) return block.startsWith(':') ? null : { id: null, event: '', data: '' };
  const end = block.indexOf('\n');
  return { id: block.slice(3, end === -1 ? undefined : end).trim(), event: '', data: '' };
}

function parseBlock(block) {
  let id = null;
  let event = 'message';
  const data = [];
  let fields = 0;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    fields++;
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (fields === 0) return null;
  return { id, event, data: data.join('\n') };
}

module.exports = { openSse, parseBlock };
