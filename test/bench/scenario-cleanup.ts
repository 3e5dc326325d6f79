/**
 * Everything a bench run must undo — child processes, throwaway databases and folders, a
 * PostgreSQL server it started — released in reverse order of acquisition, once, whether the
 * scenario succeeded, threw, or the run was interrupted.
 *
 * @example
 *   const cleanup = new Cleanup();
 *   const drop = cleanup.add("drop database x", () => dropIt());
 *   await drop();            // released now, and forgotten
 *   await cleanup.runAll();  // releases whatever is left
 */
export class Cleanup {
  private readonly tasks = new Map<number, { what: string; fn: () => unknown }>();
  private next = 0;

  /** Registers a release; the returned function runs it early (once) and forgets it. */
  add(what: string, fn: () => unknown): () => Promise<void> {
    const key = this.next++;
    this.tasks.set(key, { what, fn });
    return async () => {
      const task = this.tasks.get(key);
      if (!task) return;
      this.tasks.delete(key);
      await task.fn();
    };
  }

  /** Runs every remaining release, newest first; a failing one is reported and the rest still run. */
  async runAll(report: (message: string) => void): Promise<void> {
    const keys = [...this.tasks.keys()].sort((a, b) => b - a);
    for (const key of keys) {
      const task = this.tasks.get(key);
      if (!task) continue;
      this.tasks.delete(key);
      try {
        await task.fn();
      } catch (err) {
        report(`cleanup "${task.what}" failed: ${(err as Error).message}`);
      }
    }
  }

  /** Synchronous last resort on process exit: only the releases that finish synchronously work. */
  runAllSync(): void {
    for (const key of [...this.tasks.keys()].sort((a, b) => b - a)) {
      const task = this.tasks.get(key);
      this.tasks.delete(key);
      try {
        void task?.fn();
      } catch {
        // exiting anyway
      }
    }
  }
}
