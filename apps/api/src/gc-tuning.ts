import { setFlagsFromString } from 'node:v8';

/**
 * V8's heap sizing for a streaming server (docs/decisions.md "Turn latency"): the old generation may
 * grow to four times what a full GC left live before the next full GC, and the memory reducer (full
 * GCs that shrink the heap whenever allocation slows down) is off. A full GC marks the whole live heap
 * (~95 MB here, a third of it the tokenizers' tables) and its final pause is 15-70 ms on 2 cores, long
 * enough to hold up every stream's next chunk; with these settings the API runs much longer between
 * them and spends less CPU per turn, for a higher heap ceiling. Imported first by main.ts, before the
 * heap has grown (both flags are read at each GC).
 */
setFlagsFromString('--heap-growing-percent=300');
setFlagsFromString('--no-memory-reducer');
