export * from './preset-prompts';
export * from './examples';
export * from './in-chat-injections';
export * from './chat-completion';
export * from './post-processing';
