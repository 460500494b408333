import { DomainError } from '@hearth/domain';

/**
 * The generation slots of one API process (docs/decisions.md "Turns and runs": queue and commit
 * errors): at most `limit` turns call a model at once; the others wait in arrival order. A turn that
 * waits longer than the timeout answers 503 `generation_queue_timeout`, before anything is written.
 * A slot is held from before the turn's first write until the turn has committed or failed.
 */
export class GenerationSlots {
  private active = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(private readonly limit: number) {}

  /** Resolves with the slot's release (call it exactly once), or rejects after `timeoutMs`. */
  acquire(timeoutMs: number): Promise<() => void> {
    if (this.active < this.limit && this.waiting.length === 0) {
      this.active += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(this.releaser());
        },
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(
          new DomainError(
            'generation_queue_timeout',
            503,
            'Every generation slot stayed busy; retry shortly',
            { waited_ms: timeoutMs },
          ),
        );
      }, timeoutMs);
      this.waiting.push(waiter);
    });
  }

  /** Turns generating and turns waiting (tests, metrics). */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter; otherwise it is free.
      if (next) next.grant();
      else this.active -= 1;
    };
  }
}
