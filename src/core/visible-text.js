// Pure: untrusted text made safe to show on a terminal or a page. A node, a gateway or a peer
// chooses its own strings (model ids, error messages, names); shown raw, a control character is an
// instruction to whatever renders it: ESC and the C1 controls (CSI, OSC) set a terminal's title,
// clear its screen, write its clipboard (OSC 52); a bidi override makes a page show text reversed.
// Each such character is replaced by a visible escape naming it, so nothing is hidden and nothing runs.
// Plain JavaScript (types in visible-text.d.ts) because the dashboard's page runs it too: the
// dashboard serves this very file (src/admin/dashboard/assets.ts), so the CLI and the page share one.

/** C0 controls, DEL, C1 controls; the line and paragraph separators; the bidi embeddings, overrides, isolates and marks. */
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/** `text` with every control, separator and bidi character shown as `\xNN` / `\uNNNN`. */
export function visibleText(text) {
  return text.replace(INVISIBLE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
