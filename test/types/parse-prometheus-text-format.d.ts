/** Types of the parser the metrics tests use (the package ships none). */
declare module "parse-prometheus-text-format" {
  export interface ParsedSample {
    readonly value: string;
    readonly labels?: Record<string, string>;
  }
  export interface ParsedFamily {
    readonly name: string;
    readonly help: string;
    readonly type: "GAUGE" | "COUNTER" | "SUMMARY" | "HISTOGRAM" | "UNTYPED";
    readonly metrics: readonly ParsedSample[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
