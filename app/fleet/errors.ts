/** The fleet's typed error (code `SWB_ERR_FLEET`): an id taken, etcd unreachable, a TLS file unread. */
import { SwitchboardError } from '../../src/base/errors.ts';

/** A fleet failure: what and where, outer → inner (`fleet.id: edge-1 is held by a live router`). */
export class FleetError extends SwitchboardError {
  constructor(message: string, options?: ErrorOptions) {
    super('SWB_ERR_FLEET', message, options);
    this.name = 'FleetError';
  }
}

/** The first line of an error's message (grpc errors carry several). */
export function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0] ?? '';
}

/** The fleet id is held by another live router: the start is refused. */
export class FleetIdInUseError extends FleetError {
  constructor(message: string) {
    super(message);
    this.name = 'FleetIdInUseError';
  }
}
