/**
 * Metric constructors bound to one registry, so a service's metrics read as what they count
 * (name, help, labels, buckets) rather than as the same constructor options again and again.
 * A gauge reads its value at scrape time (`collect`).
 */
import { Counter, Gauge, Histogram, type CollectFunction, type Registry } from 'prom-client';

export interface MetricsOn {
  /** a counter; `labels` are its label names */
  counter<L extends string = never>(name: string, help: string, labels?: readonly L[]): Counter<L>;
  /** a histogram over `buckets` */
  histogram<L extends string = never>(name: string, help: string, buckets: readonly number[], labels?: readonly L[]): Histogram<L>;
  /** a gauge whose value `collect` sets at each scrape */
  gauge<L extends string = never>(name: string, help: string, collect: CollectFunction<Gauge<L>>, labels?: readonly L[]): Gauge<L>;
}

/** Constructors of metrics registered on `registry`. */
export function metricsOn(registry: Registry): MetricsOn {
  return {
    counter: (name, help, labels = []) => new Counter({ name, help, labelNames: labels, registers: [registry] }),
    histogram: (name, help, buckets, labels = []) =>
      new Histogram({ name, help, labelNames: labels, buckets: [...buckets], registers: [registry] }),
    gauge: (name, help, collect, labels = []) => new Gauge({ name, help, labelNames: labels, registers: [registry], collect }),
  };
}
