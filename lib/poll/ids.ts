/** Stream ids, one way for everything that names a stream: the cycle (streams.ts) and the dispatcher (turn.ts). */

/** The stream of an identifier group. */
export const groupStreamId = (groupId: number) => `group:${groupId}`;

/** The stream of a credential domain (domains compare without case). */
export const credentialStreamId = (domain: string) => `credentials:${domain.toLowerCase()}`;
