export * from './actor';
export * from './capabilities';
export * from './project-access';
