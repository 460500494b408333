export * from './prompt-settings-rules';
export * from './prompt-settings-view';
export * from './get-prompt-settings.use-case';
export * from './put-prompt-settings.use-case';
export * from './get-prompt-runtime-assets.use-case';
export * from './persona-placement';
