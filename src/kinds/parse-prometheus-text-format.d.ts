// The part of parse-prometheus-text-format (it ships no types) that src/kinds/load-metrics.ts uses.
declare module 'parse-prometheus-text-format' {
  interface ParsedSample {
    /** As written: "3", "NaN", "+Inf"; histogram and summary samples have other shapes. */
    readonly value?: string;
    readonly labels?: Readonly<Record<string, string>>;
  }
  interface ParsedFamily {
    readonly name: string;
    readonly help: string;
    readonly type: string;
    readonly metrics: readonly ParsedSample[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
