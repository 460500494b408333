export { activateLorebooks } from './activate';
export { parseDecorators, readLorebookEntry, SCAN_SOURCE_FLAGS } from './entry';
export type {
  CharacterFilter,
  LorebookBookDefaults,
  LorebookEntryView,
  LorebookScanSourceKind,
  LorebookSourceKind,
} from './entry';
export * from './placement';
export { prepareLorebook } from './prepare';
export type { PreparedLorebook } from './prepare';
export type { ScanSegmentKind } from './scan-buffer';
export * from './settings';
export { emptyTimedState as emptyLorebookTimedState } from './timed-effects';
export type { LorebookTimedRecord, LorebookTimedState } from './timed-effects';
export * from './types';
