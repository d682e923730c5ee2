/**
 * How a server process ends, on stdio and over HTTP alike: once, on the first reason (a signal,
 * stdin closed), it logs why, closes what `close` closes (the transport, then the audit trail and
 * shared state) and exits 0, and exits 0 anyway `boundMs` after the reason if that hangs.
 */
import { log } from '../core/log.js';

/**
 * The shutdown routine of server `name`: call it with the reason; later calls do nothing.
 * `detail` follows the reason in the log line (`, finishing calls in flight (at most 10000 ms)`).
 */
export function shutdownRoutine(name: string, boundMs: number, close: () => Promise<unknown>, detail = ''): (reason: string) => void {
  let closing = false;
  return (reason) => {
    if (closing) return;
    closing = true;
    log('info', `${name}: shutting down (${reason})${detail}`);
    setTimeout(() => {
      log('warn', `${name}: exiting ${boundMs} ms after ${reason} with work unfinished`);
      process.exit(0);
    }, boundMs).unref();
    close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
}
