/**
 * What the CLI does on a terminal: colours (only on a TTY, never with `NO_COLOR`) and a progress
 * spinner on stderr for builds that take over a second (only on an interactive TTY, never with
 * `--quiet`). Both decisions are pure functions of the stream and the environment, so they can
 * be tested without a terminal; without a TTY the output has no escape codes at all.
 */
import picocolors from 'picocolors';
import yoctoSpinner from 'yocto-spinner';

/** The part of a stream the decisions look at. */
export type StreamInfo = { isTTY?: boolean | undefined };

/** The environment variables the decisions read. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Colour on `stream`? `NO_COLOR` (any non-empty value, no-color.org) and `FORCE_COLOR=0` turn it
 * off; another `FORCE_COLOR` value turns it on; otherwise only a TTY that is not `TERM=dumb`.
 */
export function useColor(stream: StreamInfo, env: Env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** Show a progress spinner on `stream`? Only on an interactive TTY (not `TERM=dumb`, not CI), and not with `--quiet`. */
export function useProgress(stream: StreamInfo, env: Env, quiet: boolean): boolean {
  if (quiet) return false;
  if (stream.isTTY !== true || env.TERM === 'dumb') return false;
  return env.CI === undefined || env.CI === '' || env.CI === 'false';
}

/** How long a build runs before its progress line appears: 1 s, or `MCPGEN_PROGRESS_DELAY_MS` (a whole number of milliseconds, 0 = at once). */
export function progressDelay(env: Env): number {
  const raw = env.MCPGEN_PROGRESS_DELAY_MS;
  if (raw === undefined || !/^\d{1,9}$/.test(raw.trim())) return 1000;
  return Number(raw.trim());
}

/** Colour functions; identity when colour is off. */
export type Paint = {
  enabled: boolean;
  red: (s: string) => string;
  yellow: (s: string) => string;
  green: (s: string) => string;
  dim: (s: string) => string;
  bold: (s: string) => string;
  cyan: (s: string) => string;
};

/** The colour functions for `enabled`. */
export function paint(enabled: boolean): Paint {
  const c = picocolors.createColors(enabled);
  return { enabled, red: c.red, yellow: c.yellow, green: c.green, dim: c.dim, bold: c.bold, cyan: c.cyan };
}

/** A progress indicator: `stage()` names what is being done, `stop()` clears it. */
export type Progress = { stage: (text: string) => void; stop: () => void };

/** Does nothing: for non-TTY streams, `--quiet` and tests. */
export const NO_PROGRESS: Progress = { stage: () => {}, stop: () => {} };

/**
 * A spinner on `stream` that appears only once `delayMs` (1 s; see `progressDelay`) have passed: a
 * quick build prints nothing. Stages given before then are remembered; the work is partly synchronous, so a stage
 * change also re-checks the clock instead of relying on the timer alone.
 */
export function startProgress(stream: NodeJS.WriteStream, label: string, delayMs = 1000): Progress {
  const started = Date.now();
  let text = label;
  let spinner: ReturnType<typeof yoctoSpinner> | undefined;
  let stopped = false;
  const show = () => {
    if (stopped || spinner) return;
    spinner = yoctoSpinner({ text: withTime(), stream }).start();
  };
  const withTime = () => `${text} (${((Date.now() - started) / 1000).toFixed(1)} s)`;
  const timer = setTimeout(show, delayMs);
  timer.unref();
  const tick = setInterval(() => {
    if (spinner) spinner.text = withTime();
  }, 500);
  tick.unref();
  return {
    stage(next) {
      text = `${label}: ${next}`;
      if (!spinner && Date.now() - started >= delayMs) show();
      if (spinner) spinner.text = withTime();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      clearInterval(tick);
      spinner?.stop();
      spinner = undefined;
    },
  };
}
