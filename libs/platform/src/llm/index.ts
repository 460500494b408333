export * from './llm.types';
export * from './llm-client';
export * from './llm-errors';
export * from './param-mapping';
export { toAnthropicMessages } from './anthropic-adapter';
export { toGeminiContents } from './gemini-adapter';
