// check-config's counted words ("1 key", "3 keys"), for the gateway's tables and the features' alike.

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
