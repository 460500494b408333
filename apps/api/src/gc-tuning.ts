import { setFlagsFromString } from 'node:v8';

/**
 * V8's heap sizing for a streaming server (docs/decisions.md "Turn latency"): the old generation may
 * grow to four times what a full GC left live before the next full GC. A full GC marks the whole live
 * heap (~95 MB here, a third of it the tokenizers' tables) and its final pause is 15-70 ms on 2 cores,
 * long enough to hold up every stream's next chunk; with this setting the API runs much longer between
 * them and spends less CPU per turn, for a higher heap ceiling. Imported first by main.ts, before the
 * heap has grown (the flag is read at each GC).
 *
 * The memory reducer (heap-shrinking full GCs when allocation slows down, with a 30-70 ms pause when
 * the traffic comes back) can only be turned off on the command line, because V8 creates it with the
 * heap: `--no-memory-reducer` is in the `start` and `start:api` scripts and the image's entrypoint.
 */
setFlagsFromString('--heap-growing-percent=300');
