import { cloneJson, importParseError, isPlainObject, JsonObject } from './format.rules';

/**
 * Chat-completion presets (external-formats.md §e): the whole settings object is kept as imported and
 * exported unchanged (spec 3 "GET /export/preset/:id"). Parsing only checks the shape Hearth reads.
 */

export interface ParsedPreset {
  /** The preset file exactly as imported. */
  data: JsonObject;
  prompt_count: number;
  /** `character_id`s of the `prompt_order` lists (ST uses 100001; 100000 is the legacy default). */
  prompt_order_character_ids: number[];
}

export function parsePreset(input: unknown): ParsedPreset {
  if (!isPlainObject(input)) throw importParseError('preset must be a JSON object');
  const data = cloneJson(input);
  const prompts = data.prompts;
  if (prompts !== undefined && prompts !== null) {
    if (!Array.isArray(prompts))
      throw importParseError('preset prompts must be an array', { field: 'prompts' });
    prompts.forEach((prompt, i) => {
      if (!isPlainObject(prompt))
        throw importParseError(`prompts[${i}] must be an object`, { field: `prompts[${i}]` });
      if (prompt.identifier !== undefined && typeof prompt.identifier !== 'string') {
        throw importParseError(`prompts[${i}].identifier must be a string`, {
          field: `prompts[${i}].identifier`,
        });
      }
      if (prompt.content !== undefined && prompt.content !== null && typeof prompt.content !== 'string') {
        throw importParseError(`prompts[${i}].content must be a string`, { field: `prompts[${i}].content` });
      }
    });
  }
  const order = data.prompt_order;
  const ids: number[] = [];
  if (order !== undefined && order !== null) {
    if (!Array.isArray(order))
      throw importParseError('preset prompt_order must be an array', { field: 'prompt_order' });
    order.forEach((list, i) => {
      if (!isPlainObject(list) || !Array.isArray(list.order)) {
        throw importParseError(`prompt_order[${i}] must be an object with an order array`, {
          field: `prompt_order[${i}]`,
        });
      }
      if (typeof list.character_id === 'number') ids.push(list.character_id);
    });
  }
  if (data.extensions !== undefined && data.extensions !== null && !isPlainObject(data.extensions)) {
    throw importParseError('preset extensions must be an object', { field: 'extensions' });
  }
  return { data, prompt_count: Array.isArray(prompts) ? prompts.length : 0, prompt_order_character_ids: ids };
}

/** The preset file to download: unchanged from import. */
export function exportPreset(data: JsonObject): JsonObject {
  return cloneJson(data);
}
