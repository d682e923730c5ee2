/**
 * The clock of one code-mode run, shared by the server's thread (sandbox-host.ts) and the run's
 * worker (sandbox.ts): what of the time since the run began counts against its wall time. Waiting
 * for the client to answer a reflection gate's question mid-run (legacy era) does not, up to
 * {@link MAX_PAUSE_MS} per run in all; the host marks the waits.
 *
 * This file is copied into generated projects that use code mode.
 */
/**
 * Most time of one run that waiting for the client (a reflection gate's question) may leave
 * uncounted: two forms at the gate's 10-minute ask timeout. Past it, waiting counts again.
 */
export const MAX_PAUSE_MS = 20 * 60 * 1000;

/**
 * The run's shared clock beside its stop flag (bytes 8–23 of the flag's buffer, when it has them):
 * `[0]` when the current wait for the client began (epoch ms; 0: none), `[1]` ms of waiting so far.
 */
export function clockOf(flag: Int32Array | undefined): BigInt64Array | undefined {
  return flag !== undefined && flag.buffer.byteLength >= 24 ? new BigInt64Array(flag.buffer, 8, 2) : undefined;
}

/** Milliseconds of the run started at `start` that count against its wall time at `now`: waiting for the client left out (up to {@link MAX_PAUSE_MS}). */
export function countedMs(start: number, now: number, clock: BigInt64Array | undefined): number {
  if (clock === undefined) return now - start;
  const since = Number(Atomics.load(clock, 0));
  const waited = Number(Atomics.load(clock, 1)) + (since > 0 ? Math.max(0, now - since) : 0);
  return now - start - Math.min(MAX_PAUSE_MS, waited);
}
