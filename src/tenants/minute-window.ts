// What /admin/tenants shows as a tenant's usage "this minute": the counts of the current whole
// minute plus the share of the previous minute's still inside the last 60 s (a sliding estimate,
// kept for every tenant, limited or not; the limits themselves are judged by limits.ts's buckets).

import { MINUTE_MS } from './limits.ts';

/** Counts of the current and the previous whole minute. */
export interface MinuteWindow {
  index: number;
  requests: number;
  tokens: number;
  prevRequests: number;
  prevTokens: number;
}

export function minuteWindow(nowMs: number): MinuteWindow {
  return { index: Math.floor(nowMs / MINUTE_MS), requests: 0, tokens: 0, prevRequests: 0, prevTokens: 0 };
}

export function countMinute(window: MinuteWindow, nowMs: number, requests: number, tokens: number): void {
  advance(window, nowMs);
  window.requests += requests;
  window.tokens = Math.max(0, window.tokens + tokens);
}

function advance(window: MinuteWindow, nowMs: number): void {
  const index = Math.floor(nowMs / MINUTE_MS);
  if (index === window.index) return;
  const previousFollows = index === window.index + 1;
  window.prevRequests = previousFollows ? window.requests : 0;
  window.prevTokens = previousFollows ? window.tokens : 0;
  window.requests = 0;
  window.tokens = 0;
  window.index = index;
}

/** The last 60 s: this minute's counts plus the share of the previous minute's still inside the window. */
export function minuteEstimate(window: MinuteWindow, nowMs: number): { requests: number; tokens: number } {
  advance(window, nowMs);
  const share = 1 - (nowMs - window.index * MINUTE_MS) / MINUTE_MS;
  return {
    requests: Math.round(window.requests + window.prevRequests * share),
    tokens: Math.round(window.tokens + window.prevTokens * share),
  };
}
