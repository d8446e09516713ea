// Whether this gateway publishes its site's record now. Alone it always does; replicas of one
// site ([cluster] with [mesh]) hold a leader lease so that one of them publishes at a time
// (cluster/leader-lease.ts). The service asks before each publication and is told on a change:
// a replica that becomes the publisher sends its record in full at once.

export interface PublishGate {
  mayPublish(): boolean;
  /** Called on every change of `mayPublish`; answers the unsubscribe. */
  onChange(listener: () => void): () => void;
}
