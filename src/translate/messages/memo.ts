// What the answer's translation needs to remember of the client's Messages request.

export interface MessagesMemo {
  /** The client's `stop_sequences`: a node's matched stop string among them is `stop_sequence`. */
  readonly stopSequences: readonly string[];
  /** The client turned thinking off (`thinking.type: "disabled"`): a node's reasoning is not shown as thinking blocks. */
  readonly thinkingOff: boolean;
}
