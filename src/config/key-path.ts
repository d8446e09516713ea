// Renders a key path the way the operator would find it in the file: `nodes[2].url`,
// `models.available[0].aliases[1]`; keys that are not bare TOML keys are quoted.

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

export function formatKeyPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else {
      const key = typeof segment === 'string' && BARE_KEY.test(segment) ? segment : JSON.stringify(String(segment));
      text += text === '' ? key : `.${key}`;
    }
  }
  return text;
}
