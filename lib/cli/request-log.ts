/**
 * Where `npm start` logs the API's requests: a file under `.data/`, not the terminal, which is there
 * for the alerts the demo's terminal destination prints and the cycles' summaries; a console left
 * open asks the API every few seconds. One JSON line a request, appended across runs, redacted as
 * every log line is (log.ts); a request's line holds no header and no query string (api/app.ts).
 * With LOG_LEVEL=debug they are printed with the rest of the log instead, as `serve` prints them.
 *
 * @example
 * const requests = requestLog(logger.child({ component: 'api' }), '/home/me/alerts/.data');
 * createApiApp({ ...deps, requestLog: requests.logger });
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createLogger, type Logger } from '../log.ts';

export const REQUEST_LOG_FILE = 'requests.log';

export interface RequestLog {
  logger: Logger;
  /** The file the lines are appended to; none when they go to `log` (LOG_LEVEL=debug). */
  file?: string;
  close(): Promise<void>;
}

/** The request log of a run whose own log is `log`, in the folder `dir`. */
export function requestLog(log: Logger, dir: string): RequestLog {
  if (log.level === 'debug') return { logger: log, close: async () => {} };
  const file = join(dir, REQUEST_LOG_FILE);
  const out = createWriteStream(file, { flags: 'a' });
  let broken = false;
  out.on('error', (error) => {
    if (broken) return;
    broken = true;
    log.warn(`cannot write the request log ${file}: requests are not logged from now on`, { error });
  });
  return {
    file,
    logger: createLogger({
      level: 'info',
      format: 'json',
      fields: { component: 'api' },
      write: (line) => {
        if (!broken) out.write(`${line}\n`);
      },
    }),
    close: () =>
      new Promise<void>((done) => {
        if (out.destroyed) done();
        else out.end(() => done());
      }),
  };
}
