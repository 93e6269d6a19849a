/** The types of build.mjs, plain JavaScript so that `npm ci` can run it before any TypeScript tool. */
export function upToDate(at?: string): boolean;
export function buildCli(options?: { force?: boolean }): Promise<boolean>;
export function recordBuild(inputs: string[], outputs: string[], started: number, at?: string): string[];
