/**
 * Which destinations of a runtime hear of actions, and how (each kind says: its face's
 * `followUps`). Apart from follow-up.ts, which the API loads to make follow-up records: the API
 * reads the targets the pollers publish, and never loads the kinds.
 */
import type { FollowUpStyle } from '../destinations/kind.ts';
import { kindOf } from '../destinations/kinds.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { FollowUpTarget } from './follow-up.ts';

/** How `destination` hears of actions on what it was sent (its kind says); undefined: it does not. */
export function followUpStyle(destination: ResolvedDestination | undefined): FollowUpStyle | undefined {
  return destination ? kindOf(destination.type).followUps?.(destination) : undefined;
}

/** Whether `destination` hears of actions on what it was sent. */
export function takesFollowUps(destination: ResolvedDestination | undefined): boolean {
  return followUpStyle(destination) !== undefined;
}

/**
 * Whether its sent records keep their item: its follow-ups show the item again (an edited
 * message, an action body), where an incident is resolved and a ticket commented by key.
 */
export function keepsItems(destination: ResolvedDestination | undefined): boolean {
  const style = followUpStyle(destination);
  return style === 'message' || style === 'action';
}

/** The destinations of a runtime that hear of actions. */
export function followUpTargets(destinations: Iterable<ResolvedDestination>): FollowUpTarget[] {
  return [...destinations].flatMap((d) => {
    const style = followUpStyle(d);
    return style ? [{ name: d.name, style }] : [];
  });
}
