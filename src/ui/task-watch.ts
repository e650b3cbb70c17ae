// The TUI's view of the task board: the tree's tasks, read at start and again on every NOTIFY of
// the tree's task channel (trigger tasks_notify) — one read in flight at a time, one more after
// it when changes came meanwhile — and after the listener reconnects (it may have missed some).
import type { Bus } from "../bus/bus.js";
import type { Db } from "../db/client.js";
import { listTasks, taskChannel, type TaskEntry } from "../tasks/board.js";

export function watchTasks(
  db: Db,
  bus: Bus,
  treeId: string,
  onTasks: (tasks: TaskEntry[]) => void,
): { close(): void } {
  let closed = false;
  let reading = false;
  let again = false;
  let unsubscribe: (() => void) | undefined;
  const read = async (): Promise<void> => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        const tasks = await listTasks(db, treeId).catch(() => undefined);
        if (tasks && !closed) onTasks(tasks);
      } while (again && !closed);
    } finally {
      reading = false;
    }
  };
  void bus
    .subscribeAll([taskChannel(treeId)], () => void read())
    .then((off) => {
      if (closed) off();
      else unsubscribe = off;
    })
    .catch(() => undefined)
    .finally(() => void read());
  return {
    close() {
      closed = true;
      unsubscribe?.();
    },
  };
}
