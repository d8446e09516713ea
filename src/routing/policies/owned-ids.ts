// What the one memory of owners (sessions.ts `answerOwner` / `learnResponse`) holds besides answers'
// ids: a resumable stream's conversation id (`X-Conversation-Id`, llama-server's resumable streams),
// held apart from every answer id of the same text (no answer id holds a newline) and kept for the
// node's retention, not the session TTL: llama-server keeps a finished stream 300 s and drops it at
// its GC's next 60 s tick (tools/server/server-stream.cpp, STREAM_SESSION_TTL_SECONDS and
// STREAM_SESSION_GC_INTERVAL_SECONDS), so an owner is remembered 360 s after its stream was last seen.

/** The longest a node keeps a finished stream: its TTL plus one GC tick. */
export const CONVERSATION_RETENTION_MS = (300 + 60) * 1000;

const CONVERSATION = 'conversation\n';

/** The owner memory's id for a resumable stream's conversation. */
export function conversationOwnerId(conversationId: string): string {
  return `${CONVERSATION}${conversationId}`;
}

/** How long the owner of `ownedId` is remembered: a conversation's for the node's retention, an answer's for the session TTL. */
export function ownerTtlMs(ownedId: string, sessionTtlMs: number): number {
  return ownedId.startsWith(CONVERSATION) ? CONVERSATION_RETENTION_MS : sessionTtlMs;
}
