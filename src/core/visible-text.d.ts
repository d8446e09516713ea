// Types of visible-text.js (plain JavaScript: the dashboard's page loads it as it is).

/** `text` with every control, separator and bidi character shown as `\xNN` / `\uNNNN`. */
export declare function visibleText(text: string): string;
